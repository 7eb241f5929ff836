// Script of the contract screen SYS010: reports when the shared files have been joined.
(function () {
  var status = document.getElementById('sys010-status');
  if (!window.AckLoader) {
    status.textContent = 'The loader (/lib/ack.loader.js) did not load.';
    return;
  }
  window.AckLoader.ready.then(function (result) {
    status.textContent = 'Ready: ' + result.log.length + ' loader problem(s).';
    document.documentElement.setAttribute('data-screen', 'ready');
  });
})();
