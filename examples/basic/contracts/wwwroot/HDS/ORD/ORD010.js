// ORD010: a list and a detail form. The list is the screen's own sample data; the detail form asks
// the wwwroot index APIs (docs/helper-apis.md) for a time-ordered id (id), a short order code
// (encode-no) and, on save, a checksum of what was entered (sha256hash).
(function () {
  var orders = [
    { no: 1041, customer: 'Northwind Traders', date: '2026-11-18', amount: 1280.5, status: 'Open' },
    { no: 1040, customer: 'Contoso Ltd', date: '2026-11-17', amount: 342.0, status: 'Shipped' },
    { no: 1039, customer: 'Fabrikam Inc', date: '2026-11-15', amount: 2150.75, status: 'Invoiced' },
    { no: 1038, customer: 'Adventure Works', date: '2026-11-12', amount: 89.9, status: 'Invoiced' },
    { no: 1037, customer: 'Tailspin Toys', date: '2026-11-10', amount: 615.0, status: 'Shipped' },
  ];
  var api = '/wwwroot/api/index';
  var byId = function (id) {
    return document.getElementById(id);
  };
  var money = new Intl.NumberFormat('en', { style: 'currency', currency: 'EUR' });
  var getJson = function (url) {
    return fetch(url, { headers: { Accept: 'application/json' } }).then(function (r) {
      if (!r.ok) throw new Error(url + ' answered ' + r.status);
      return r.json();
    });
  };
  var selected = null;

  function codeFor(order) {
    return order.code
      ? Promise.resolve(order.code)
      : getJson(api + '/encode-no?numbers=' + order.no).then(function (code) {
          order.code = code;
          return code;
        });
  }

  function render() {
    var body = byId('orders').tBodies[0];
    body.textContent = '';
    orders.forEach(function (order) {
      var tr = document.createElement('tr');
      tr.setAttribute('aria-selected', String(order === selected));
      [String(order.no), order.customer, order.date, money.format(order.amount)].forEach(function (text, i) {
        var td = document.createElement('td');
        td.textContent = text;
        if (i === 3) td.className = 'num';
        tr.append(td);
      });
      var status = document.createElement('td');
      var badge = document.createElement('span');
      badge.className = 'ack-badge' + (order.status === 'Open' ? ' open' : '');
      badge.textContent = order.status;
      status.append(badge);
      tr.append(status);
      tr.addEventListener('click', function () {
        show(order);
      });
      body.append(tr);
    });
  }

  function show(order) {
    selected = order;
    render();
    byId('detail-title').textContent = 'Order ' + order.no;
    byId('f-customer').value = order.customer;
    byId('f-date').value = order.date;
    byId('f-amount').value = order.amount;
    byId('f-status').value = order.status;
    byId('f-code').value = '…';
    return codeFor(order).then(function (code) {
      byId('f-code').value = code;
    });
  }

  byId('new-order').addEventListener('click', function () {
    getJson(api + '/id?count=1')
      .then(function (ids) {
        var order = {
          no:
            Math.max.apply(
              null,
              orders.map(function (o) {
                return o.no;
              }),
            ) + 1,
          id: ids[0],
          customer: '',
          date: new Date().toISOString().slice(0, 10),
          amount: 0,
          status: 'Open',
        };
        orders.unshift(order);
        return show(order).then(function () {
          byId('detail-status').textContent = 'New order, id ' + order.id + ' from the host.';
          byId('f-customer').focus();
        });
      })
      .catch(function (err) {
        byId('detail-status').textContent = err.message;
      });
  });

  byId('detail').addEventListener('submit', function (event) {
    event.preventDefault();
    if (!selected) return;
    selected.customer = byId('f-customer').value;
    selected.date = byId('f-date').value;
    selected.amount = Number(byId('f-amount').value);
    selected.status = byId('f-status').value;
    render();
    var text = JSON.stringify([selected.no, selected.customer, selected.date, selected.amount, selected.status]);
    getJson(api + '/sha256hash?text=' + encodeURIComponent(text)).then(function (hash) {
      byId('detail-status').textContent = 'Saved order ' + selected.no + ' (checksum ' + hash.slice(0, 12) + '…).';
      document.documentElement.setAttribute('data-saved', selected.no);
    });
  });

  render();
  show(orders[0]).then(function () {
    document.documentElement.setAttribute('data-screen', 'ready');
  });

  // Shared files: the theme styles the page; settings.json names the application.
  if (window.AckLoader) {
    window.AckLoader.ready.then(function (result) {
      var settings = byId('settings');
      if (settings) byId('app-name').textContent = JSON.parse(settings.textContent).applicationName;
      byId('joined').textContent =
        'Shared files joined: ' +
        result.styles
          .concat(
            result.scripts,
            result.textAssets.map(function (a) {
              return a.url;
            }),
          )
          .join(', ');
      document.documentElement.setAttribute('data-shared', 'joined');
    });
  }
})();
