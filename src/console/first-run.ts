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
 */
export function firstRunPanel(run: FirstRun): SafeHtml {
  const api = `${run.baseUrl}/v1`;
  const body = JSON.stringify({ model: run.model, messages: [{ role: "user", content: "Say hello" }] });
  return html`<section class="notice" aria-labelledby="first-run-heading" id="first-run"><h2 id="first-run-heading">Make your first request</h2>
<ol>
<li><p>Create an API key on the <a href="/console/keys?ns=${encodeURIComponent(run.namespaceId)}">API keys</a> page (or from a terminal), and keep it in an environment variable:</p>
<pre><code>SWITCHYARD_URL=${run.baseUrl} bun run switchyard -- login
SWITCHYARD_URL=${run.baseUrl} bun run switchyard -- keys create --name my-app --scope inference:invoke
export SWITCHYARD_API_KEY=brk_…</code></pre></li>
<li><p>Send a request with curl:</p>
<pre><code>curl ${api}/chat/completions \\
  -H "Authorization: Bearer $SWITCHYARD_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '${body}'</code></pre></li>
<li><p>Or use the OpenAI SDK with this server as its base URL (Python):</p>
<pre><code>from openai import OpenAI
import os

client = OpenAI(base_url="${api}", api_key=os.environ["SWITCHYARD_API_KEY"])
answer = client.chat.completions.create(model="${run.model}", messages=[{"role": "user", "content": "Say hello"}])
print(answer.choices[0].message.content)</code></pre></li>
</ol>
<p class="hint">The request shows up here and on the Requests page within a second.</p></section>`;
}
