// The live page of knc's runtime: the topology drawn by the runtime, or by
// the page from the runtime's DOT when the runtime does not draw, each
// node's Ready condition, and its counters, which /ui/events sends again
// whenever they change. Everything comes from the runtime itself.
'use strict';

const SVGNS = 'http://www.w3.org/2000/svg';
const COUNTS = ['accepted', 'delivered', 'retried', 'deadLettered', 'kept', 'dropped', 'inFlight'];

// The part of the topology shown: the filters of knc graph, as the
// query parameters of the page, passed on to every request it makes.
const SELECTION = (() => {
  const q = new URLSearchParams(location.search);
  const out = new URLSearchParams();
  for (const k of ['namespace', 'broker', 'focus']) for (const v of q.getAll(k)) if (v.trim()) out.append(k, v.trim());
  if (out.has('focus') && q.get('depth')) out.set('depth', q.get('depth'));
  const s = out.toString();
  return s ? '?' + s : '';
})();

// SelectionError is the server's refusal of a selection that names
// nothing; its message says why, and suggests a near name.
class SelectionError extends Error {}

const page = {
  nodes: [],
  byId: new Map(),
  recentEvents: 0,
  selected: null,
  state: {},
  loading: null,
};

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v; else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

async function fetchOK(url) {
  const r = await fetch(url, { cache: 'no-store' });
  if (r.status === 400) throw new SelectionError((await r.text()).trim());
  if (!r.ok) throw new Error(url + ': ' + r.status + ' ' + (await r.text()));
  return r;
}

// getDrawing fetches the drawing: {svg}, laid out by the runtime or, when
// the runtime does not lay it out (501, the runtime's image), by the page
// from the runtime's DOT; or {reason} when neither could (a topology too
// large to lay out, say), which the page shows in the drawing's place,
// above the table that still lists every object.
async function getDrawing() {
  const url = '/ui/graph.svg' + SELECTION;
  const r = await fetch(url, { cache: 'no-store' });
  if (r.status === 400) throw new SelectionError((await r.text()).trim());
  if (r.status !== 501) {
    if (!r.ok) return { reason: (await r.text()).trim() };
    return { svg: await r.text() };
  }
  const d = await fetch('/ui/graph.dot' + SELECTION, { cache: 'no-store' });
  if (d.status === 400) throw new SelectionError((await d.text()).trim());
  if (!d.ok) return { reason: (await d.text()).trim() };
  const dot = await d.text();
  try {
    return { svg: await layOutInBrowser(dot) };
  } catch (e) {
    return { reason: 'The topology could not be laid out in this browser (' + e.message + '); the table below lists it, and `knc graph -o svg` draws it.' };
  }
}

// LAYOUT_TIMEOUT_MS bounds a layout in the browser, as the runtime bounds
// its own: a worker still busy then is ended.
const LAYOUT_TIMEOUT_MS = 30000;

// SVG_FONT_FAMILY is the font of the drawing's text, as knc-draw writes
// it (internal/topology/layout's svgFontFamily): Verdana, whose widths
// Graphviz sized the boxes by, or a face of like width.
const SVG_FONT_FAMILY = 'Verdana,DejaVu Sans,Bitstream Vera Sans,sans-serif';

// layOutInBrowser lays out dot with Graphviz's dot in a worker of its own
// (layout.js), and returns the SVG as knc-draw writes it.
function layOutInBrowser(dot) {
  return new Promise((resolve, reject) => {
    const worker = new Worker('/ui/static/layout.js', { type: 'module' });
    const timer = setTimeout(() => {
      worker.terminate();
      reject(new Error('it took longer than ' + LAYOUT_TIMEOUT_MS / 1000 + 's; pick a part: a focus, some Brokers or some namespaces'));
    }, LAYOUT_TIMEOUT_MS);
    const end = () => { clearTimeout(timer); worker.terminate(); };
    worker.addEventListener('message', ev => {
      end();
      if (ev.data.error) reject(new Error(ev.data.error));
      else resolve(ev.data.svg.replaceAll('font-family="Verdana"', 'font-family="' + SVG_FONT_FAMILY + '"'));
    });
    worker.addEventListener('error', ev => {
      end();
      reject(new Error(ev.message || 'the layout worker failed to start'));
    });
    worker.postMessage(dot);
  });
}

async function getJSON(url) {
  return (await fetchOK(url)).json();
}

// loadTopology fetches the nodes and the drawing, and builds the table.
function loadTopology() {
  if (!page.loading) {
    page.loading = (async () => {
      const [top, svg] = await Promise.all([
        getJSON('/ui/api/topology' + SELECTION),
        getDrawing(),
      ]);
      page.nodes = top.nodes || [];
      page.recentEvents = top.recentEvents || 0;
      page.byId = new Map(page.nodes.map(n => [n.id, n]));
      drawGraph(svg);
      // When the drawing first shows, for whoever measures the page.
      if (performance.getEntriesByName('knc-drawn').length === 0) performance.mark('knc-drawn');
      buildTable();
      render();
      if (page.selected && !page.byId.has(page.selected)) select(null);
    })().finally(() => { page.loading = null; });
  }
  return page.loading;
}

// svgNode finds the box of a node in the drawing: by its ID, or by its
// short name, as an element ID or a Graphviz <title>.
function svgNode(svg, n) {
  for (const key of [n.id, n.short]) {
    const byId = svg.getElementById ? svg.getElementById(key) : null;
    if (byId && byId.classList.contains('node')) return byId;
  }
  for (const g of svg.querySelectorAll('g.node')) {
    const t = g.querySelector(':scope > title');
    if (t && t.textContent === n.short) return g;
  }
  return null;
}

function drawGraph(drawing) {
  const box = document.getElementById('graph');
  if (drawing.reason) {
    box.replaceChildren(el('p', { class: 'empty' }, drawing.reason));
    return;
  }
  const doc = new DOMParser().parseFromString(drawing.svg, 'image/svg+xml');
  const svg = doc.documentElement;
  if (svg.nodeName !== 'svg') {
    box.replaceChildren(el('p', { class: 'empty' }, 'The topology could not be drawn.'));
    return;
  }
  const imported = document.importNode(svg, true);
  box.replaceChildren(imported);
  for (const n of page.nodes) {
    const g = svgNode(imported, n);
    if (!g) continue;
    g.classList.add('knc-node');
    g.dataset.id = n.id;
    g.addEventListener('click', ev => { ev.preventDefault(); select(n.id); });
    // The count goes under the box: Graphviz leaves room between ranks.
    try {
      const b = g.getBBox();
      const t = document.createElementNS(SVGNS, 'text');
      t.setAttribute('class', 'knc-count');
      t.setAttribute('x', String(b.x + 2));
      t.setAttribute('y', String(b.y + b.height + 10));
      g.append(t);
    } catch (e) { /* not laid out: no count on the drawing */ }
  }
}

// Routes deliver: a Trigger, a Subscription, a step of a Sequence or a
// branch of a Parallel. Ingresses take events in: a Broker, a Channel, a
// Sequence or a Parallel (through its first Channel).
const ROUTE_KINDS = new Set(['Trigger', 'Subscription', 'Step', 'Branch']);
const INGRESS_KINDS = new Set(['Broker', 'Channel', 'Sequence', 'Parallel']);

function buildTable() {
  const body = document.querySelector('#routes tbody');
  const rows = page.nodes.map(n => {
    const isRoute = ROUTE_KINDS.has(n.kind);
    const tr = el('tr', { 'data-id': n.id, class: isRoute ? 'route' : 'source' },
      el('td', { class: 'obj' }, el('span', { class: 'kind-label' }, n.kind), n.namespace + '/' + n.name),
      el('td', {}, el('span', { class: 'ready', 'data-field': 'ready' }, '…'), el('div', { class: 'message', 'data-field': 'message' })),
      ...COUNTS.map(c => el('td', { class: 'num', 'data-field': c }, '0')));
    tr.addEventListener('click', () => select(n.id));
    return tr;
  });
  if (rows.length === 0) {
    rows.push(el('tr', {}, el('td', { colspan: String(2 + COUNTS.length), class: 'empty' }, 'No Broker or Channel is served.')));
  }
  body.replaceChildren(...rows);
}

function render() {
  for (const n of page.nodes) {
    const s = page.state[n.id] || { counts: {} };
    const row = document.querySelector('#routes tr[data-id="' + CSS.escape(n.id) + '"]');
    if (row) {
      const ready = row.querySelector('[data-field="ready"]');
      const status = s.ready ? s.ready.status : 'Unknown';
      ready.textContent = s.ready ? (status === 'True' ? 'Ready' : status === 'False' ? 'Not ready' : 'Unknown') : '…';
      ready.dataset.status = status;
      row.querySelector('[data-field="message"]').textContent = s.ready && s.ready.status !== 'True' ? [s.ready.reason, s.ready.message].filter(Boolean).join(': ') : '';
      for (const c of COUNTS) {
        row.querySelector('[data-field="' + c + '"]').textContent = String(s.counts[c] || 0);
      }
      row.classList.toggle('selected', n.id === page.selected);
    }
    const g = document.querySelector('#graph g.knc-node[data-id="' + CSS.escape(n.id) + '"]');
    if (g) {
      for (const st of ['True', 'False', 'Unknown']) g.classList.toggle('knc-ready-' + st, (s.ready ? s.ready.status : 'Unknown') === st);
      g.classList.toggle('knc-selected', n.id === page.selected);
      const t = g.querySelector('text.knc-count');
      if (t) {
        const c = s.counts;
        t.textContent = INGRESS_KINDS.has(n.kind)
          ? (c.accepted || 0) + ' accepted · ' + (c.inFlight || 0) + ' in flight'
          : (c.delivered || 0) + ' delivered' + (c.deadLettered ? ' · ' + c.deadLettered + ' dead-lettered' : '') + (c.kept ? ' · ' + c.kept + ' kept' : '');
      }
    }
  }
  if (page.selected) renderDetails();
}

function select(id) {
  page.selected = id;
  const aside = document.getElementById('details');
  aside.hidden = !id;
  render();
  if (id) {
    loadRecent();
    loadKept();
  }
}

function field(dl, name, value, code) {
  if (value === undefined || value === null || value === '') return;
  dl.append(el('dt', {}, name), el('dd', {}, code ? el('code', {}, value) : value));
}

function renderDetails() {
  const n = page.byId.get(page.selected);
  if (!n) return;
  const s = page.state[n.id] || { counts: {} };
  document.getElementById('details-title').textContent = n.kind + ' ' + n.namespace + '/' + n.name;
  const dl = document.getElementById('details-fields');
  dl.replaceChildren();
  if (s.ready) {
    field(dl, 'Ready', s.ready.status + (s.ready.reason ? ' (' + s.ready.reason + ')' : ''));
    field(dl, 'message', s.ready.message);
  }
  if (n.kind === 'Trigger') field(dl, 'filter', n.filter || 'every event', !!n.filter);
  field(dl, 'subscriber', n.subscriber, true);
  field(dl, 'path', n.path, true);
  const focus = new URLSearchParams({ focus: n.id, depth: '1' });
  document.getElementById('focus-link').href = '/ui?' + focus.toString();
  for (const c of COUNTS) field(dl, c, String(s.counts[c] || 0));
  const reasons = Object.entries(s.kept || {}).sort().map(([r, v]) => r + ' ' + v).join(', ');
  field(dl, 'kept for', reasons);
}

// The kept letters of a Trigger or Subscription come from the kept-letter
// API (knc dlq's), which the admin listener alone serves, to whoever holds
// its token (or, without one, to clients on the loopback interface). The
// page sends the token it is given, kept in this tab only; the list holds
// no event data.
const TOKEN_KEY = 'knc-admin-token';

async function loadKept() {
  const n = page.byId.get(page.selected);
  const box = document.getElementById('kept');
  const note = document.getElementById('kept-note');
  const table = document.getElementById('kept-table');
  const form = document.getElementById('kept-token');
  if (!n || (n.kind !== 'Trigger' && n.kind !== 'Subscription')) { box.hidden = true; return; }
  box.hidden = false;
  form.hidden = true;
  table.hidden = true;
  const q = new URLSearchParams({ namespace: n.namespace, targetKind: n.kind, target: n.name });
  const headers = {};
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = 'Bearer ' + token;
  let r;
  try {
    r = await fetch('/dlq/letters?' + q.toString(), { cache: 'no-store', headers });
  } catch (e) {
    note.textContent = String(e);
    return;
  }
  if (page.selected !== n.id) return;
  if (r.status === 404) {
    note.textContent = 'Kept letters are listed on the admin listener only (knc run --admin-addr; in a cluster, the admin port), with the token of knc dlq.';
    return;
  }
  if (r.status === 401 || r.status === 403) {
    note.textContent = (await r.text()).trim();
    form.hidden = false;
    return;
  }
  if (!r.ok) {
    note.textContent = r.status + ' ' + (await r.text()).trim();
    return;
  }
  const letters = (await r.json()).letters || [];
  note.textContent = letters.length === 0 ? 'None kept.' : letters.length + ' kept, oldest first; knc dlq show ID prints one with its data.';
  table.hidden = letters.length === 0;
  document.querySelector('#kept-table tbody').replaceChildren(...letters.map(l => el('tr', {},
    el('td', {}, el('code', {}, l.id)),
    el('td', {}, new Date(l.keptAt).toLocaleString()),
    el('td', {}, l.reason),
    el('td', {}, l.status ? String(l.status) : (l.error || '')),
    el('td', {}, String(l.attempts)),
    el('td', {}, el('code', {}, l.event.type), ' ', el('code', {}, l.event.id)),
    el('td', {}, l.replayedAt ? new Date(l.replayedAt).toLocaleString() : ''))));
}

function setUpKeptToken() {
  const form = document.getElementById('kept-token');
  form.addEventListener('submit', ev => {
    ev.preventDefault();
    const v = form.elements.token.value.trim();
    if (v) sessionStorage.setItem(TOKEN_KEY, v); else sessionStorage.removeItem(TOKEN_KEY);
    form.elements.token.value = '';
    loadKept();
  });
}

async function loadRecent() {
  const n = page.byId.get(page.selected);
  const box = document.getElementById('recent');
  const note = document.getElementById('recent-note');
  const body = document.querySelector('#recent-table tbody');
  if (!n || (n.kind !== 'Trigger' && n.kind !== 'Subscription')) { box.hidden = true; return; }
  box.hidden = false;
  body.replaceChildren();
  if (page.recentEvents === 0) {
    note.textContent = 'Recent events are not kept. Set runtime.ui.recentEvents in knc.yaml to keep the attributes (never the data) of the last events each route matched.';
    document.getElementById('recent-table').hidden = true;
    return;
  }
  document.getElementById('recent-table').hidden = false;
  const r = await getJSON('/ui/api/recent?id=' + encodeURIComponent(n.id));
  if (page.selected !== n.id) return;
  note.textContent = 'The last ' + page.recentEvents + ' at most, newest first; attributes only.';
  body.replaceChildren(...r.events.map(e => el('tr', {},
    el('td', {}, new Date(e.time).toLocaleTimeString()),
    el('td', {}, ...Object.entries(e.attributes).sort().map(([k, v]) => el('code', {}, k + ': ' + v))))));
}

function connect() {
  const conn = document.getElementById('connection');
  const es = new EventSource('/ui/events' + SELECTION);
  es.addEventListener('open', () => { conn.dataset.state = 'live'; conn.textContent = 'live'; });
  es.addEventListener('error', () => { conn.dataset.state = 'lost'; conn.textContent = 'reconnecting'; });
  es.addEventListener('state', async ev => {
    const before = page.selected && page.state[page.selected] ? page.state[page.selected].counts.kept : 0;
    page.state = JSON.parse(ev.data);
    document.getElementById('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
    const ids = Object.keys(page.state);
    // Another table is served: draw it again.
    if (ids.length !== page.nodes.length || ids.some(id => !page.byId.has(id))) await loadTopology();
    render();
    if (page.selected && page.recentEvents > 0) loadRecent();
    if (page.selected && page.state[page.selected] && page.state[page.selected].counts.kept !== before) loadKept();
  });
}

// The form shows the selection, and sends only the fields that are set,
// so that the address of the page stays short enough to share.
function setUpFilter() {
  const form = document.getElementById('filter');
  const q = new URLSearchParams(SELECTION);
  for (const k of ['namespace', 'broker', 'focus']) form.elements[k].value = q.getAll(k).join(',');
  if (q.has('depth')) form.elements.depth.value = q.get('depth');
  form.addEventListener('submit', ev => {
    ev.preventDefault();
    const out = new URLSearchParams();
    for (const k of ['namespace', 'broker', 'focus']) {
      const v = form.elements[k].value.trim();
      if (v) out.set(k, v);
    }
    if (out.has('focus')) out.set('depth', form.elements.depth.value || '1');
    const s = out.toString();
    location.assign('/ui' + (s ? '?' + s : ''));
  });
}

document.getElementById('close').addEventListener('click', () => select(null));
setUpFilter();
setUpKeptToken();
loadTopology().then(connect, e => {
  if (e instanceof SelectionError) {
    const p = document.getElementById('selection-error');
    p.textContent = 'Nothing to show: ' + e.message;
    p.hidden = false;
    document.getElementById('graph').replaceChildren(el('p', { class: 'empty' }, 'Change the selection above, or show all.'));
    return;
  }
  document.getElementById('graph').replaceChildren(el('p', { class: 'empty' }, String(e)));
  connect();
});
