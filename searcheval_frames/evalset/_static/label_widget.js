// Front end of searcheval_frames.widget.LabelWidget (anywidget ESM, no build step).
// Every action is sent to Python, which writes the label to the LabelStore journal
// (fsync-ed) before it moves on; this view only renders the synced state.

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function bar(label) {
  const wrap = el("div", "sef-lw-progress");
  const caption = el("span", "sef-lw-progress-label", label);
  const outer = el("div", "sef-lw-bar");
  const inner = el("div", "sef-lw-bar-fill");
  outer.appendChild(inner);
  const count = el("span", "sef-lw-progress-count");
  wrap.append(caption, outer, count);
  return {
    node: wrap,
    set(done, total) {
      const frac = total > 0 ? done / total : 0;
      inner.style.width = `${(100 * frac).toFixed(1)}%`;
      count.textContent = `${done} / ${total}`;
      wrap.dataset.done = String(done);
      wrap.dataset.total = String(total);
    },
  };
}

function render({ model, el: root }) {
  const box = el("div", "sef-lw");
  box.tabIndex = 0;
  box.setAttribute("role", "application");
  box.setAttribute("aria-label", "relevance labelling");

  const header = el("div", "sef-lw-header");
  const position = el("span", "sef-lw-position");
  const assessor = el("span", "sef-lw-assessor");
  header.append(position, assessor);

  const overall = bar("all");
  const perQuery = bar("this query");

  const query = el("div", "sef-lw-query");
  const doc = el("div", "sef-lw-doc");
  const docId = el("div", "sef-lw-docid");
  const title = el("div", "sef-lw-title");
  const text = el("div", "sef-lw-text");
  doc.append(docId, title, text);

  const grades = el("div", "sef-lw-grades");
  const nav = el("div", "sef-lw-nav");
  const prev = el("button", "sef-lw-prev", "← prev");
  const skip = el("button", "sef-lw-skip", "skip (s)");
  const clear = el("button", "sef-lw-clear", "clear label");
  const next = el("button", "sef-lw-next", "next →");
  nav.append(prev, skip, clear, next);
  const status = el("div", "sef-lw-status");
  const help = el(
    "div",
    "sef-lw-help",
    "keys: grade number to label · ←/→ previous/next · s skip · click here first to focus",
  );

  box.append(header, overall.node, perQuery.node, query, doc, grades, nav, status, help);
  root.appendChild(box);

  const send = (action, extra = {}) => {
    const item = model.get("item") || {};
    model.send({ action, index: item.index ?? -1, ...extra });
  };

  let gradeKeys = {};
  function renderGrades() {
    grades.replaceChildren();
    gradeKeys = {};
    const list = model.get("grades") || [];
    list.forEach(([value, name], i) => {
      const key = value >= 0 && value <= 9 ? String(value) : i <= 9 ? String(i) : null;
      const b = el("button", "sef-lw-grade", key !== null && key !== String(name) ? `${name} (${key})` : name);
      b.dataset.grade = String(value);
      b.title = key !== null ? `key ${key}` : "";
      b.addEventListener("click", () => {
        send("label", { grade: value });
        box.focus();
      });
      grades.appendChild(b);
      if (key !== null) gradeKeys[key] = value;
    });
  }

  function renderItem() {
    const item = model.get("item") || {};
    const p = model.get("progress") || {};
    overall.set(p.done ?? 0, p.total ?? 0);
    perQuery.set(p.query_done ?? 0, p.query_total ?? 0);
    assessor.textContent = `assessor: ${model.get("assessor")}`;
    if (item.index === undefined || item.index < 0) {
      position.textContent = "nothing to label";
      query.textContent = "";
      docId.textContent = "";
      title.textContent = "";
      text.textContent = "";
      box.dataset.index = "-1";
      return;
    }
    position.textContent = `item ${item.index + 1} of ${p.total ?? "?"} · query ${item.query_id}`;
    query.textContent = item.query ? item.query : `query ${item.query_id}`;
    docId.textContent = `document ${item.doc_id}`;
    title.textContent = item.title || "";
    text.textContent = item.text || "";
    box.dataset.index = String(item.index);
    box.dataset.queryId = item.query_id;
    box.dataset.docId = item.doc_id;
    box.dataset.label = item.label === null || item.label === undefined ? "" : String(item.label);
    for (const b of grades.querySelectorAll("button.sef-lw-grade")) {
      b.classList.toggle("sef-lw-selected", b.dataset.grade === box.dataset.label);
    }
  }

  function renderStatus() {
    const s = model.get("status") || "";
    status.textContent = s;
    status.classList.toggle("sef-lw-error", s.startsWith("error"));
    box.dataset.saved = String(model.get("saved_count"));
  }

  prev.addEventListener("click", () => send("prev"));
  next.addEventListener("click", () => send("next"));
  skip.addEventListener("click", () => send("skip"));
  clear.addEventListener("click", () => send("clear"));
  box.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const k = event.key;
    let handled = true;
    if (k in gradeKeys) send("label", { grade: gradeKeys[k] });
    else if (k === "ArrowLeft" || k === "k") send("prev");
    else if (k === "ArrowRight" || k === "j") send("next");
    else if (k === "s") send("skip");
    else handled = false;
    if (handled) {
      // keep JupyterLab from treating the key as a notebook command
      event.preventDefault();
      event.stopPropagation();
    }
  });

  const onGrades = () => { renderGrades(); renderItem(); };
  model.on("change:grades", onGrades);
  model.on("change:item", renderItem);
  model.on("change:progress", renderItem);
  model.on("change:status", renderStatus);
  model.on("change:saved_count", renderStatus);
  renderGrades();
  renderItem();
  renderStatus();
  return () => {
    model.off("change:grades", onGrades);
    model.off("change:item", renderItem);
    model.off("change:progress", renderItem);
    model.off("change:status", renderStatus);
    model.off("change:saved_count", renderStatus);
  };
}

export default { render };
