// Front end of searcheval_frames.widget.LabelWidget (anywidget ESM, no build step).
// Every action is sent to Python, which writes the label to the LabelStore journal
// (fsync-ed) before it moves on; this view only renders the synced state.
//
// Sequence numbers: each action carries (view, seq). Python answers every action with
// {ack: seq} after it has synced the new state, so the view knows which of its actions
// it already shows. A key pressed while an earlier action is unanswered carries
// behind=true: Python applies it to the document the earlier actions led to (keys
// faster than the round trip label one document each, never the same one twice).
//
// Liveness: a ping every second; no answer to a ping or an action for NO_ANSWER_MS, or
// the widget manager closing the comm (kernel restart), switches the view to
// "disconnected — run the cell again" and input is refused (never silently dropped).

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

// text as segments [[piece, isTerm], ...] (the query's terms marked): text nodes and
// <mark> elements only, never innerHTML, so a document's markup shows as text
function fill(node, plain, segs) {
  node.replaceChildren();
  if (Array.isArray(segs) && segs.length) {
    for (const [piece, hit] of segs) {
      if (hit) node.appendChild(el("mark", "sef-lw-hit", piece));
      else node.appendChild(document.createTextNode(String(piece)));
    }
  } else {
    node.textContent = plain || "";
  }
}

const PING_MS = 1000;
const NO_ANSWER_MS = 3500;

function render({ model, el: root }) {
  const box = el("div", "sef-lw");
  box.tabIndex = 0;
  box.setAttribute("role", "application");
  box.setAttribute("aria-label", "relevance labelling");
  box.dataset.connected = "true";
  box.dataset.focused = "false";

  const banner = el("div", "sef-lw-banner");
  banner.hidden = true;

  const header = el("div", "sef-lw-header");
  const position = el("span", "sef-lw-position");
  const assessor = el("span", "sef-lw-assessor");
  header.append(position, assessor);
  const journal = el("div", "sef-lw-journal");

  const overall = bar("all");
  const perQuery = bar("this query");
  const queriesBar = bar("queries done");
  queriesBar.node.classList.add("sef-lw-queries");

  const team = el("div", "sef-lw-team");
  const query = el("div", "sef-lw-query");
  const others = el("div", "sef-lw-others");
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
  const cant = el("button", "sef-lw-cant", "can't judge (x)");
  const undo = el("button", "sef-lw-undo", "undo (u)");
  nav.append(prev, skip, cant, undo, clear, next);
  const noteRow = el("div", "sef-lw-note-row");
  const noteInput = el("input", "sef-lw-note");
  noteInput.type = "text";
  noteInput.placeholder = "note on this document (n), Enter saves";
  const noteSave = el("button", "sef-lw-note-save", "save note");
  noteRow.append(noteInput, noteSave);
  const status = el("div", "sef-lw-status");
  const focusLine = el("div", "sef-lw-focus");

  box.append(banner, header, journal, overall.node, perQuery.node, queriesBar.node, team, query,
             others, doc, grades, nav, noteRow, status, focusLine);
  root.appendChild(box);

  // ---------------------------------------------------------------- connection state
  const view = Math.random().toString(36).slice(2, 10);
  let seq = 0; // last action sent by this view
  let acked = 0; // last action whose result this view shows
  let waitingSince = null; // time of the oldest unanswered ping or action
  let nonce = 0;
  let connected = true;
  let closed = false;

  let kernelOk = true;
  let kernelWhy = "";
  function setConnected(ok, why) {
    if (closed && ok) return;
    kernelOk = ok;
    kernelWhy = why || "";
    renderConnection();
  }
  function renderConnection() {
    const storeOk = model.get("store_ok") !== false;
    const ok = kernelOk && storeOk;
    connected = ok;
    box.dataset.connected = ok ? "true" : "false";
    box.dataset.storeOk = storeOk ? "true" : "false";
    banner.hidden = ok;
    if (!kernelOk) banner.textContent = `disconnected — run the cell again (${kernelWhy})`;
    else if (!storeOk) {
      banner.textContent = `the label store cannot be reached (${model.get("journal")}) — ` +
        "input is refused until it answers again; every label saved before is kept";
    } else banner.textContent = "";
    for (const b of box.querySelectorAll("button")) b.disabled = !ok;
    noteInput.disabled = !ok;
    if (!ok) {
      status.textContent = kernelOk ? (model.get("status") || "nothing is saved now")
        : "nothing is saved while disconnected";
      status.classList.add("sef-lw-error");
    } else {
      renderStatus();
    }
    renderFocus();
  }

  function answered() {
    waitingSince = null;
    if (!kernelOk && !closed) setConnected(true);
  }

  function waiting() {
    if (waitingSince === null) waitingSince = Date.now();
  }

  const onCustom = (msg) => {
    if (!msg || typeof msg !== "object") return;
    if (msg.session !== undefined && msg.session !== model.get("session")) return;
    if ("pong" in msg) answered();
    if ("ack" in msg && msg.view === view) {
      acked = Math.max(acked, msg.ack);
      box.dataset.acked = String(acked);
      answered();
    }
  };
  const onClosed = () => {
    closed = true;
    setConnected(false, "its kernel was restarted or shut down");
  };
  const ping = () => {
    nonce += 1;
    waiting();
    try {
      model.send({ action: "ping", nonce });
    } catch (err) {
      onClosed();
    }
  };
  // the widget manager marks the comm dead on a kernel restart: ask at once
  const onLive = () => ping();

  const timer = setInterval(() => {
    if (!root.isConnected) return;
    if (waitingSince !== null && Date.now() - waitingSince > NO_ANSWER_MS) {
      if (kernelOk) {
        setConnected(false, `no answer from the kernel for ${Math.round(NO_ANSWER_MS / 1000)} s; ` +
          "if it is only busy, this clears when it answers");
      }
    }
    if (waitingSince === null) ping();
  }, PING_MS);

  const send = (action, extra = {}) => {
    if (!connected) {
      status.textContent = kernelOk
        ? "not saved: the label store cannot be reached — wait until it answers again"
        : "not saved: the widget is disconnected — run the cell again";
      status.classList.add("sef-lw-error");
      return false;
    }
    const item = model.get("item") || {};
    seq += 1;
    box.dataset.sent = String(seq);
    try {
      model.send({ action, view, seq, index: item.index ?? -1, behind: seq - 1 > acked, ...extra });
    } catch (err) {
      onClosed();
      return false;
    }
    waiting();
    return true;
  };

  // ---------------------------------------------------------------- focus
  function renderFocus() {
    const has = document.activeElement === box;
    box.dataset.focused = has ? "true" : "false";
    if (!connected) {
      focusLine.textContent = kernelOk ? "input refused: the label store is unreachable"
        : "input refused: disconnected";
    }
    else if (has) {
      focusLine.textContent = model.get("mode") === "review"
        ? "⌨ keys go to this widget: grade number = the adjudicated label · n note · ←/→ · s skip"
        : "⌨ keys go to this widget: grade number to label · x can't judge · u undo · n note · " +
          "←/→ previous/next · s skip";
    }
    else focusLine.textContent = "keys are NOT going to this widget — click it to label with the keyboard";
    focusLine.classList.toggle("sef-lw-focus-on", has && connected);
  }
  box.addEventListener("focus", renderFocus);
  box.addEventListener("blur", renderFocus);
  box.addEventListener("mousedown", (event) => {
    if (event.target === noteInput) return;
    if (event.target === box || !(event.target instanceof HTMLButtonElement)) {
      setTimeout(() => box.focus({ preventScroll: true }), 0);
    }
  });

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
      b.disabled = !connected;
      b.addEventListener("click", () => {
        send("label", { grade: value });
        box.focus({ preventScroll: true });
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
    queriesBar.set(p.queries_done ?? 0, p.n_queries ?? 0);
    const review = model.get("mode") === "review";
    box.dataset.mode = review ? "review" : "label";
    assessor.textContent = `${review ? "reviewer" : "assessor"}: ${model.get("assessor")}`;
    journal.textContent = `labels saved to ${model.get("journal")}`;
    renderTeam();
    if (item.index === undefined || item.index < 0) {
      position.textContent = review ? "no conflict left to review" : "nothing to label";
      others.textContent = "";
      query.textContent = "";
      docId.textContent = "";
      title.textContent = "";
      text.textContent = "";
      box.dataset.index = "-1";
      return;
    }
    position.textContent = `${review ? "conflict" : "item"} ${item.index + 1} of ` +
      `${review ? p.total ?? "?" : p.total ?? "?"} · query ${item.query_id}`;
    fill(query, item.query ? item.query : `query ${item.query_id}`, item.query_segments);
    docId.textContent = `document ${item.doc_id}` + (item.runs ? ` · runs: ${item.runs}` : "");
    fill(title, item.title || "", item.title_segments);
    fill(text, item.text || "", item.text_segments);
    const given = Array.isArray(item.others) ? item.others : null;
    if (given && given.length) {
      const parts = given.map(([who, v]) => (who ? `${who}: ${v}` : String(v)));
      others.textContent = `${review ? "labels given" : "other labels"}: ${parts.join(" · ")}`;
    } else {
      others.textContent = review ? "labels given: none" : "";
    }
    box.dataset.cantJudge = item.cant_judge ? "true" : "false";
    box.dataset.index = String(item.index);
    box.dataset.queryId = item.query_id;
    box.dataset.docId = item.doc_id;
    box.dataset.label = item.label === null || item.label === undefined ? "" : String(item.label);
    for (const b of grades.querySelectorAll("button.sef-lw-grade")) {
      b.classList.toggle("sef-lw-selected", b.dataset.grade === box.dataset.label);
    }
  }

  function fmtSecs(v) {
    return v === null || v === undefined ? "–" : `${Number(v).toFixed(1)} s/label`;
  }
  function renderTeam() {
    const rows = model.get("team") || [];
    team.replaceChildren();
    team.hidden = rows.length === 0;
    for (const r of rows) {
      const line = el("div", "sef-lw-team-row" + (r.me ? " sef-lw-me" : ""));
      line.dataset.assessor = r.assessor;
      line.dataset.done = String(r.done);
      line.dataset.left = r.left === null ? "" : String(r.left);
      line.textContent = `${r.assessor}${r.me ? " (you)" : ""}: ${r.done} done · ` +
        `${r.left ?? "?"} left · ${fmtSecs(r.median_seconds)} · ETA ${r.eta ?? "–"}`;
      team.appendChild(line);
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
  cant.addEventListener("click", () => send("cant_judge"));
  undo.addEventListener("click", () => send("undo"));
  const saveNote = () => {
    const textValue = noteInput.value.trim();
    if (!textValue) return;
    if (send("note", { text: textValue })) noteInput.value = "";
    box.focus({ preventScroll: true });
  };
  noteSave.addEventListener("click", saveNote);
  box.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const k = event.key;
    if (event.target === noteInput) { // typing a note: only Enter / Escape are ours
      if (k === "Enter") saveNote();
      else if (k === "Escape") box.focus({ preventScroll: true });
      event.stopPropagation();
      return;
    }
    let handled = true;
    if (k in gradeKeys) send("label", { grade: gradeKeys[k] });
    else if (k === "x") send("cant_judge");
    else if (k === "u") send("undo");
    else if (k === "n") noteInput.focus({ preventScroll: true });
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
  model.on("change:journal", renderItem);
  model.on("change:status", renderStatus);
  model.on("change:saved_count", renderStatus);
  model.on("change:team", renderTeam);
  model.on("change:mode", renderItem);
  model.on("change:store_ok", renderConnection);
  model.on("msg:custom", onCustom);
  model.on("comm:close", onClosed);
  model.on("comm_live_update", onLive);
  model.on("destroy", onClosed);
  renderGrades();
  renderItem();
  renderStatus();
  renderConnection();
  renderFocus();
  // take the keyboard when shown (JupyterLab may move focus while other cells run;
  // the focus line says so plainly, a click brings it back)
  requestAnimationFrame(() => box.focus({ preventScroll: true }));
  return () => {
    clearInterval(timer);
    model.off("change:grades", onGrades);
    model.off("change:item", renderItem);
    model.off("change:progress", renderItem);
    model.off("change:journal", renderItem);
    model.off("change:status", renderStatus);
    model.off("change:saved_count", renderStatus);
    model.off("change:team", renderTeam);
    model.off("change:mode", renderItem);
    model.off("change:store_ok", renderConnection);
    model.off("msg:custom", onCustom);
    model.off("comm:close", onClosed);
    model.off("comm_live_update", onLive);
    model.off("destroy", onClosed);
  };
}

export default { render };
