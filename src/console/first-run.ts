import { html, type SafeHtml } from "./html";

export interface FirstRun {
  /** The server's public base URL (PUBLIC_URL), without a trailing slash. */
  baseUrl: string;
  /** A model of the catalog to put in the examples. */
  model: string;
  namespaceId: string;
}

/**
 * For a namespace without a single request: the three steps to the first one, with this
 * server's real address — a key, a request with curl, and the OpenAI SDK pointed here.
 * The commands are those of the README's quickstart, which work in its two-command setup
 * (a checkout after `npm ci`: npm and node on the PATH, bun only through npm), and the key
 * goes in SWITCHYARD_API_KEY, the variable the CLI reads too. `test/console/first-run.test.ts`
 * runs them against a server.
 */
export function firstRunPanel(run: FirstRun): SafeHtml {
  const api = `${run.baseUrl}/v1`;
  const body = JSON.stringify({ model: run.model, messages: [{ role: "user", content: "Say hello" }] });
  return html`<section class="notice" aria-labelledby="first-run-heading" id="first-run"><h2 id="first-run-heading">Make your first request</h2>
<ol>
<li><p>Create an API key on the <a href="/console/keys?ns=${encodeURIComponent(run.namespaceId)}">API keys</a> page, or from a terminal in a checkout of Switchyard after <code>npm ci</code>; keep it in an environment variable:</p>
<pre><code>export SWITCHYARD_URL=${run.baseUrl}
npm run switchyard -- login
npm run --silent switchyard -- keys create --name my-app --scope inference:invoke
export SWITCHYARD_API_KEY=brk_…</code></pre></li>
<li><p>Send a request with curl:</p>
<pre><code>curl -s ${api}/chat/completions \
  -H "Authorization: Bearer $SWITCHYARD_API_KEY" \
  -H "Content-Type: application/json" \
  -d '${body}'</code></pre></li>
<li><p>Or use the OpenAI SDK for Node.js with this server as its base URL: save as <code>hello.mjs</code> and run <code>node hello.mjs</code> (after <code>npm install openai</code>, or in the checkout, which has it):</p>
<pre><code>import OpenAI from "openai";

const client = new OpenAI({ baseURL: "${api}", apiKey: process.env.SWITCHYARD_API_KEY });
const answer = await client.chat.completions.create({ model: "${run.model}", messages: [{ role: "user", content: "Say hello" }] });
console.log(answer.choices[0].message.content);</code></pre></li>
</ol>
<p class="hint">The request shows up here and on the Requests page within a second.</p></section>`;
}
