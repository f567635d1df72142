// A worker of the live page that lays out a drawing given as DOT with
// Graphviz's dot, compiled to WebAssembly (graphviz/README.md): the page
// asks it when the runtime does not lay out the drawing itself. It runs
// apart from the page so that a large layout leaves the page responsive,
// and so that the page can stop a layout by ending the worker.
import { Graphviz } from './graphviz/graphviz.js';

const graphviz = Graphviz.load();

self.addEventListener('message', async ev => {
  try {
    const gv = await graphviz;
    self.postMessage({ svg: gv.dot(ev.data) });
  } catch (e) {
    self.postMessage({ error: String(e && e.message ? e.message : e) });
  }
});
