// Script of loader-demo.html: waits for the shared files, then shows what they brought.
(function () {
  function byId(id) {
    return document.getElementById(id);
  }
  function textOf(id) {
    var element = byId(id);
    return element ? element.textContent : null;
  }
  function show(result) {
    var app = window.ackApp;
    byId('status').textContent = app
      ? 'Shared files loaded; app-init.js ran at ' + app.initialisedAt + '.'
      : 'Shared files loaded; the shared script did not run.';

    var settingsText = textOf('settings');
    var view = byId('settings-view');
    if (settingsText !== null) {
      var settings = JSON.parse(settingsText);
      Object.keys(settings).forEach(function (key) {
        var dt = document.createElement('dt');
        var dd = document.createElement('dd');
        dt.textContent = key;
        dd.textContent = Array.isArray(settings[key]) ? settings[key].join(', ') : String(settings[key]);
        dd.setAttribute('data-setting', key);
        view.append(dt, dd);
      });
    } else {
      view.textContent = 'settings.json is not available.';
    }

    // notice.html is host-owned markup meant for screens: parsed through a template, not executed.
    var noticeHtml = textOf('notice');
    if (noticeHtml !== null) {
      var template = document.createElement('template');
      template.innerHTML = noticeHtml;
      byId('notice-view').append(template.content);
    }
    byId('readme-view').textContent = textOf('readme') || '';
    byId('terms-view').textContent = textOf('terms') || '';

    var logView = byId('log-view');
    if (result.log.length === 0) logView.innerHTML = '<li>No problems.</li>';
    result.log.forEach(function (entry) {
      var li = document.createElement('li');
      li.textContent = entry.level + ': ' + entry.message + (entry.url ? ' (' + entry.url + ')' : '');
      logView.append(li);
    });
    document.documentElement.setAttribute('data-demo', 'ready');
  }
  if (window.AckLoader) window.AckLoader.ready.then(show);
  else byId('status').textContent = 'The loader (/lib/ack.loader.js) did not load.';
})();
