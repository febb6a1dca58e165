// The console's only script and stylesheet, served from /ui/console.js and /ui/console.css (the
// Content-Security-Policy allows scripts and styles from 'self' only). The script keeps one region
// of a page live: it polls the region's `data-src` with If-None-Match every second and swaps the
// HTML in when the server's ETag changed. No framework, no build step.

export const CONSOLE_JS = `'use strict';
(function () {
  var live = document.querySelectorAll('[data-live]');
  live.forEach(function (region) {
    var etag = region.getAttribute('data-etag') || '';
    var src = region.getAttribute('data-live');
    function tick() {
      var headers = etag ? { 'if-none-match': etag } : {};
      fetch(src, { headers: headers, credentials: 'same-origin', cache: 'no-store' }).then(function (res) {
        if (res.status === 200) {
          etag = res.headers.get('etag') || '';
          return res.text().then(function (text) { region.innerHTML = text; region.setAttribute('data-etag', etag); });
        }
        if (res.status === 401) { window.location.assign('/ui/login'); }
      }).catch(function () {}).then(function () { setTimeout(tick, 1000); });
    }
    setTimeout(tick, 1000);
  });
})();
`;

export const CONSOLE_CSS = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1b1f24; background: #f6f7f9; }
header { display: flex; align-items: center; gap: 1.5em; padding: .6em 1.2em; background: #1b1f24; color: #fff; }
header h1 { font-size: 1.1em; margin: 0; }
header a { color: #cfe3ff; margin-right: 1em; }
nav { display: flex; align-items: center; gap: 1em; flex: 1; }
nav form { margin-left: auto; }
main { padding: 1em 1.2em; }
table { border-collapse: collapse; background: #fff; margin-bottom: 1.2em; }
th, td { border: 1px solid #d8dde3; padding: .35em .6em; text-align: left; vertical-align: top; }
th { background: #eef1f4; }
pre { background: #fff; border: 1px solid #d8dde3; padding: .6em; overflow-x: auto; max-width: 100ch; }
.state-ready { color: #17702b; font-weight: 600; }
.state-parked, .state-failed, .state-closed { color: #a3231a; font-weight: 600; }
.state-backoff, .state-connecting { color: #9a6200; font-weight: 600; }
.held { color: #a3231a; font-weight: 600; }
.notice { background: #e8f4ea; border: 1px solid #9fd0a8; padding: .5em .8em; margin-bottom: 1em; }
.problem { background: #fbeaea; border: 1px solid #e3a5a0; padding: .5em .8em; margin-bottom: 1em; }
form.inline { display: inline; }
button { cursor: pointer; }
.muted { color: #66707a; }
`;
