// HTML for the console, built as strings on the server: every value from a server, an agent or a
// file goes through `esc`, so nothing it says can become markup; there is no inline script or style
// (the Content-Security-Policy forbids both), only /ui/console.js and /ui/console.css. Characters
// that are invisible or reorder text (bidi controls such as U+202E, zero-width ones, other format
// and control characters but tab and newline) are shown as `[U+202E]`: a tool name, a button's
// label or a stderr line cannot look like something else to the admin who approves it.

/** Invisible and text-reordering characters (Unicode Cc, Cf, and the line/paragraph separators), tab and newline aside. */
const INVISIBLE = /(?![\t\n])[\p{Cc}\p{Cf}\u2028\u2029]/gu;

function esc(value: unknown): string {
  return String(value)
    .replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
    .replace(INVISIBLE, (c) => `[U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}]`);
}

/** A tagged template whose `${}` values are escaped; `raw(...)` values are inserted as they are. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Raw {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out +=
      value instanceof Raw
        ? value.text
        : Array.isArray(value)
          ? value.map((v) => (v instanceof Raw ? v.text : esc(v))).join('')
          : esc(value);
    out += strings[i + 1]!;
  });
  return new Raw(out);
}

export class Raw {
  constructor(readonly text: string) {}
}

export function raw(text: string): Raw {
  return new Raw(text);
}

/** A whole page: the header with who is signed in (and the sign-out form), then `body`. */
export function page(title: string, body: Raw, login?: { admin: string; csrf: string }): string {
  const nav =
    login === undefined
      ? raw('')
      : html`<nav><a href="/ui">Overview</a> <a href="/ui/agent">View as agent</a> <a href="/ui/quotas">Quotas</a> <a href="/ui/approvals">Pending approvals</a>
<form method="post" action="/ui/logout" class="inline"><input type="hidden" name="csrf" value="${login.csrf}"><span>signed in as <b>${login.admin}</b></span> <button type="submit">Sign out</button></form></nav>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · mcpgate</title><link rel="stylesheet" href="/ui/console.css"><script src="/ui/console.js" defer></script></head>
<body><header><h1>mcpgate</h1>${nav.text}</header><main>${body.text}</main></body></html>
`;
}
