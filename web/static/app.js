// gpuplan pages: sort a table by clicking a header, filter its rows as you type. No framework.
(function () {
  function cellValue(row, i) {
    var c = row.cells[i];
    if (!c) return '';
    var v = c.getAttribute('data-value');
    return v !== null ? v : c.textContent.trim();
  }
  function asNumber(s) {
    var n = parseFloat(String(s).replace(/[^0-9.,\-eE]/g, '').replace(/\u202f/g, '').replace(/,(?=\d{3}\b)/g, '').replace(',', '.'));
    return isNaN(n) ? null : n;
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(heads, function (th, i) {
      th.tabIndex = 0;
      th.classList.add('sort-head');
      function sort() {
        var body = table.tBodies[0];
        var rows = Array.prototype.filter.call(body.rows, function (r) { return !r.classList.contains('warnings'); });
        var dir = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', dir === 1 ? 'ascending' : 'descending');
        var numeric = th.classList.contains('num');
        rows.sort(function (a, b) {
          var x = cellValue(a, i), y = cellValue(b, i);
          if (numeric) {
            var nx = asNumber(x), ny = asNumber(y);
            if (nx === null) return 1;
            if (ny === null) return -1;
            return (nx - ny) * dir;
          }
          return x.localeCompare(y) * dir;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      }
      th.addEventListener('click', sort);
      th.addEventListener('keydown', function (e) { if (e.key === 'Enter') sort(); });
    });
  });
  document.querySelectorAll('input#quick').forEach(function (input) {
    var table = document.getElementById(input.getAttribute('data-table'));
    if (!table) return;
    input.addEventListener('input', function () {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0, rows = table.tBodies[0].rows;
      Array.prototype.forEach.call(rows, function (r) {
        var text = r.textContent.toLowerCase();
        r.hidden = !words.every(function (w) { return text.indexOf(w) >= 0; });
        if (!r.hidden) shown++;
      });
      // The quick filter sees only this page's rows: say so (a trial typed h100 on the first 300
      // of 2,862 offers and got 0 rows with no hint).
      var note = document.getElementById('quick-note');
      if (note && input.getAttribute('data-note')) {
        note.hidden = words.length === 0;
        note.textContent = input.getAttribute('data-note').replace('{n}', shown).replace('{m}', rows.length);
      }
    });
  });
})();
