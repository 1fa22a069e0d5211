// Renders /openapi/json as a browsable list. Served by Switchyard itself: the page
// must work on machines and deployments with no CDN access.
(async function () {
  const main = document.getElementById("routes");
  const filter = document.getElementById("filter");
  let spec;
  try {
    spec = await (await fetch("/openapi/json")).json();
  } catch (error) {
    main.textContent = "Could not load /openapi/json: " + error;
    return;
  }
  const byTag = new Map();
  for (const [path, item] of Object.entries(spec.paths || {})) {
    for (const [method, operation] of Object.entries(item)) {
      if (typeof operation !== "object" || !operation) continue;
      const tag = (operation.tags && operation.tags[0]) || "other";
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag).push({ path, method, operation });
    }
  }
  function el(tag, props, children) {
    const node = document.createElement(tag);
    Object.assign(node, props || {});
    for (const child of children || []) node.append(child);
    return node;
  }
  function render(query) {
    main.replaceChildren();
    for (const [tag, routes] of [...byTag.entries()].sort()) {
      const shown = routes.filter((r) => !query || (r.method + " " + r.path + " " + (r.operation.summary || "")).toLowerCase().includes(query));
      if (shown.length === 0) continue;
      const section = el("section", { className: "tag" }, [el("h2", { textContent: tag })]);
      for (const { path, method, operation } of shown) {
        const scope = operation["x-scope"];
        const summary = el("summary", {}, [
          el("span", { className: "method " + method, textContent: method.toUpperCase() }),
          el("span", { className: "path", textContent: path }),
          scope ? el("span", { className: "scope", textContent: scope }) : "",
        ]);
        const body = [el("p", { textContent: operation.summary || "" })];
        const schema = operation.requestBody && operation.requestBody.content && Object.values(operation.requestBody.content)[0];
        if (schema && schema.schema) body.push(el("pre", { textContent: JSON.stringify(schema.schema, null, 2) }));
        section.append(el("details", { className: "route" }, [summary, ...body]));
      }
      main.append(section);
    }
  }
  filter.addEventListener("input", () => render(filter.value.trim().toLowerCase()));
  render("");
})();
