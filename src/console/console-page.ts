import { createHash } from "node:crypto";
import { html, SafeHtml } from "./html";

/**
 * The console's one stylesheet, inline (the pages load nothing else, from anywhere) and
 * allowed by its hash in the Content-Security-Policy. Fluid widths only, so a page reads
 * at 375 px without horizontal scrolling; focus is always visible.
 */
const STYLESHEET = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1b1f24;background:#f6f7f9}
main{max-width:92rem;margin:0 auto;padding:1rem}
header{background:#1b1f24;color:#fff;padding:.75rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;justify-content:space-between}
header a,header .who{color:#fff}
h1{font-size:1.5rem;margin:.5rem 0 1rem}
h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
section>h2:first-child,.card>h2:first-child,figure h3{margin-top:0}
section,form.card{background:#fff;border:1px solid #d0d7de;border-radius:.5rem;padding:1rem;margin:0 0 1rem}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input,select,button{font:inherit;max-width:100%}
input[type=email],input[type=password],input[type=text],input[type=date],select{width:100%;padding:.5rem;border:1px solid #8c959f;border-radius:.35rem;background:#fff}
button{padding:.5rem 1rem;border:1px solid #1b1f24;border-radius:.35rem;background:#1f6feb;color:#fff;cursor:pointer;margin:.75rem .5rem 0 0}
button.secondary{background:#fff;color:#1b1f24}
button.danger{background:#b42318;border-color:#b42318}
header button{margin:0;padding:.25rem .75rem;background:transparent;border-color:#fff}
:focus-visible{outline:3px solid #f0b400;outline-offset:2px}
a{color:#0a58ca}
nav ul{list-style:none;padding:0;margin:0 0 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1rem}
nav a[aria-current=page]{color:#1b1f24;font-weight:700;text-decoration:none;border-bottom:3px solid #1f6feb}
form.card,.narrow{max-width:48rem}
.grid{display:grid;gap:1rem;grid-template-columns:minmax(0,1fr);margin:0 0 1rem}
.grid>*{margin:0}
.grid.aside,.grid.form-first{align-items:start}
@media (min-width:64rem){.grid.two{grid-template-columns:minmax(0,1fr) minmax(0,1fr)}.grid.aside{grid-template-columns:minmax(0,3fr) minmax(0,2fr)}.grid.form-first{grid-template-columns:minmax(0,2fr) minmax(0,3fr)}}
figure.chart-card{background:#fff;border:1px solid #d0d7de;border-radius:.5rem;padding:1rem}
svg.chart{display:block;width:100%;height:auto}
svg.bar{display:block;width:100%;height:.8rem;margin:.25rem 0}
.legend{list-style:none;padding:0;margin:.5rem 0;display:flex;flex-wrap:wrap;gap:.25rem 1rem;font-size:.9rem}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #d0d7de;vertical-align:top}
.num{text-align:right}
.scroll{overflow-x:auto}
table.dense{font-size:.85rem}
table.dense th,table.dense td{white-space:nowrap;padding:.25rem .45rem}
table.dense td.wrap{white-space:normal}
form.card.picker{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;max-width:none;padding:.5rem 1rem}
.picker label{margin:0}
.picker select{width:auto;flex:0 1 20rem}
.picker button{margin:0}
form.card.wide{max-width:none}
table.dense tr.failed td{background:#fef3f2}
.stats{display:grid;grid-template-columns:repeat(auto-fit,minmax(9.5rem,1fr));gap:.75rem;margin:0 0 1rem}
.stats>div{background:#fff;border:1px solid #d0d7de;border-radius:.5rem;padding:.75rem 1rem}
.stats dt,.stats dd{display:block}
.stats dd{font-size:1.4rem;font-weight:700}
.choices{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center;margin:0 0 1rem}
.choices ul{list-style:none;display:flex;flex-wrap:wrap;gap:.25rem;padding:0;margin:0}
.choices a{display:inline-block;padding:.2rem .6rem;border:1px solid #8c959f;border-radius:1rem;text-decoration:none}
.choices a[aria-current]{background:#1b1f24;border-color:#1b1f24;color:#fff}
.filters{display:grid;grid-template-columns:repeat(auto-fit,minmax(10rem,1fr));gap:0 1rem;align-items:end}
pre{background:#f0f2f5;padding:.75rem;border-radius:.35rem;white-space:pre-wrap;overflow-wrap:anywhere;font-size:.9rem}
@media (max-width:47.99rem){table.dense thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}table.dense tr{display:block;border-bottom:2px solid #d0d7de;padding:.25rem 0}table.dense td{display:flex;justify-content:space-between;gap:1rem;white-space:normal;border:0;padding:.1rem .25rem;overflow-wrap:anywhere}table.dense td::before{content:attr(data-label);font-weight:600;color:#57606a;flex:0 0 auto}}
dl{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:.25rem 1rem;margin:0}
dt{color:#57606a}
dd{margin:0;font-variant-numeric:tabular-nums;overflow-wrap:anywhere}
.error{border:1px solid #b42318;background:#fef3f2;color:#7a271a;padding:.75rem;border-radius:.35rem}
.notice{border:1px solid #1a7f37;background:#effaf1;padding:.75rem;border-radius:.35rem}
.code{font:600 1.4rem/1.2 ui-monospace,monospace;letter-spacing:.1em}
.scopes li{margin:.25rem 0}
.hint{color:#57606a;font-size:.9rem}
textarea{font:inherit;width:100%;padding:.5rem;border:1px solid #8c959f;border-radius:.35rem}
fieldset{border:1px solid #d0d7de;border-radius:.35rem;margin:.75rem 0;padding:.25rem .75rem .5rem;min-width:0}
legend{font-weight:600}
label.check{display:flex;gap:.5rem;align-items:center;font-weight:400;margin:.35rem 0}
form.inline{display:inline}
.items{list-style:none;padding:0;margin:0}
.items>li{border-top:1px solid #d0d7de;padding:.75rem 0}
h3{font-size:1rem;margin:0 0 .5rem;overflow-wrap:anywhere}
h4{font-size:.95rem;margin:.75rem 0 .25rem}
.key-policies{list-style:none;padding:0;margin:0}
.key-policies>li{margin:.25rem 0 .75rem}
.policy-status p{margin:.25rem 0 0}
.blocked-label{color:#b42318}
.policy-status p.blocked-why{font-size:.85rem;color:#7a271a;white-space:normal}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
table.dense th[scope=row]{text-align:left;font-weight:600}
table.dense td.limits{min-width:16rem;white-space:normal}
.inline-filter input{width:auto;display:inline-block;max-width:100%;padding:.4rem;border:1px solid #8c959f;border-radius:.35rem}
details.edit{margin:.5rem 0}
details.edit summary{cursor:pointer;color:#0b57d0}
@media (max-width:47.99rem){table.dense tbody th{display:block;padding:.25rem}table.dense td.limits{min-width:0;display:block}}
input.secret{font-family:ui-monospace,monospace}
p,li,dd,h1,h2,.who{overflow-wrap:anywhere}
`.replace(/\n/g, "");

// Inserted as is (a constant of this file), so the page carries exactly what was hashed.
const STYLE_HASH = `'sha256-${createHash("sha256").update(STYLESHEET).digest("base64")}'`;

export interface PageOptions {
  title: string;
  body: SafeHtml;
  status?: number;
  /** The signed-in account's email, for the header (with a sign-out button when `signOutToken` is set). */
  signedInAs?: string;
  signOutToken?: string;
  /**
   * Origins (or `scheme:` sources) a form on this page may end up at besides this one:
   * the consent page's form is answered with a redirect to the client, and browsers hold
   * a redirect after a form submission to `form-action`.
   */
  formTargets?: readonly string[];
  /** Set-Cookie values to send with the page. */
  cookies?: readonly string[];
  /** Extra elements for the document's head (meta tags). */
  head?: SafeHtml;
}

/**
 * The policy every console response carries: nothing loads from anywhere (only the
 * inline stylesheet, by hash; no script at all), forms post only back here, and no page
 * can be framed.
 */
export function contentSecurityPolicy(formTargets: readonly string[] = []): string {
  return [
    "default-src 'none'",
    `style-src ${STYLE_HASH}`,
    `form-action 'self'${formTargets.map((target) => ` ${target}`).join("")}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
}

/** Headers every console response carries, pages and redirects alike. */
export function consoleHeaders(formTargets?: readonly string[]): Headers {
  return new Headers({
    "content-security-policy": contentSecurityPolicy(formTargets),
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  });
}

export function renderPage(options: PageOptions): Response {
  const who = options.signedInAs === undefined ? "" : html`<span class="who">${options.signedInAs}</span>`;
  const signOut =
    options.signOutToken === undefined
      ? who
      : html`<form method="post" action="/console/sign-out">${who}
<input type="hidden" name="csrf_token" value="${options.signOutToken}"> <button type="submit">Sign out</button></form>`;
  const header = html`<header><a href="/console">Switchyard console</a>${signOut}</header>`;
  const page = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · Switchyard</title><style>${new SafeHtml(STYLESHEET)}</style>${options.head}</head>
<body>${header}<main>${options.body}</main></body></html>`;
  const headers = consoleHeaders(options.formTargets);
  headers.set("content-type", "text/html; charset=utf-8");
  for (const cookie of options.cookies ?? []) headers.append("set-cookie", cookie);
  return new Response(page.text, { status: options.status ?? 200, headers });
}

/**
 * A redirect to `location` (a path on this server, or a redirect URI the authorization
 * server has just checked) with the console's headers: 303 by default, so the browser
 * follows a form's answer with a GET.
 */
export function redirect(location: string, cookies: readonly string[] = [], status = 303): Response {
  const headers = consoleHeaders();
  headers.set("location", location);
  for (const cookie of cookies) headers.append("set-cookie", cookie);
  return new Response(null, { status, headers });
}
