// Shared start-up script: runs on every screen that uses @ack/loader, before AckLoader.ready
// resolves. It offers screens a small helper object and marks the page as initialised.
(function () {
  var previous = window.ackApp;
  window.ackApp = {
    name: 'ack example',
    initialisedAt: new Date().toISOString(),
    runs: previous && previous.runs ? previous.runs + 1 : 1,
    /** Reads a JSON text asset joined by the loader (null when it is missing). */
    readJson: function (id) {
      var element = document.getElementById(id);
      return element ? JSON.parse(element.textContent) : null;
    },
  };
  document.documentElement.setAttribute('data-app-init', 'done');
})();
