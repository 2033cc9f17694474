// The DOM of a page rebuilt from rrweb's serialized nodes (a full
// snapshot's tree, the nodes a mutation adds) and changed by its
// incremental mutations, with the map from rrweb's node ids to nodes.
// Written from rrweb's documented event format (rrweb-snapshot's
// serializedNode: type 0 document, 1 doctype, 2 element, 3 text, 4 CDATA,
// 5 comment; `isShadowHost`/`isShadow` for open shadow roots), not from
// its code.
//
// Every problem is counted under a reason in `skipped` and the rest goes
// on: a node id that points nowhere, an attribute name the DOM refuses,
// a tree nested deeper than maxDepth.

const NODE_DOCUMENT = 0;
const NODE_DOCTYPE = 1;
const NODE_ELEMENT = 2;
const NODE_TEXT = 3;
const NODE_COMMENT = 5;
const SVG_NS = 'http://www.w3.org/2000/svg';

export function createRebuild(document, { maxDepth, skip }) {
  const nodes = new Map();     // rrweb id -> node
  const idOf = new WeakMap();  // node -> rrweb id

  const remember = (id, node) => {
    if (typeof id !== 'number') return;
    nodes.set(id, node);
    idOf.set(node, id);
  };

  const setAttribute = (el, name, value) => {
    if (typeof name !== 'string' || name.startsWith('rr_') || name === '_cssText') return;
    if (value === false || value === null || value === undefined) return;
    try {
      el.setAttribute(name, value === true ? '' : String(value));
    } catch {
      skip('attribute name the DOM refuses');
    }
  };

  /** Builds the element of a serialized element node (no children). An
   *  inlined stylesheet (<link> with _cssText) becomes a <style> holding
   *  it, so that jsdom's computed style sees it. */
  const element = (node, inSvg) => {
    const tag = typeof node.tagName === 'string' && /^[A-Za-z][\w:.-]*$/.test(node.tagName) ? node.tagName : null;
    if (!tag) { skip('element with a bad tag name'); return null; }
    const attrs = node.attributes && typeof node.attributes === 'object' ? node.attributes : {};
    const css = typeof attrs._cssText === 'string' ? attrs._cssText : null;
    let el;
    if (css !== null && tag.toLowerCase() === 'link') {
      el = document.createElement('style');
      el.textContent = css;
      return el;
    }
    el = node.isSVG || inSvg ? document.createElementNS(SVG_NS, tag) : document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) setAttribute(el, name, value);
    if (css !== null && tag.toLowerCase() === 'style') el.textContent = css;
    return el;
  };

  /** Builds a serialized node and its subtree; null when it cannot be. */
  const build = (node, depth = 0, inSvg = false) => {
    if (!node || typeof node !== 'object') { skip('node that is not an object'); return null; }
    if (depth > maxDepth) { skip(`tree nested deeper than ${maxDepth}`); return null; }
    let out;
    switch (node.type) {
      case NODE_TEXT:
        // A <style>'s text is its _cssText, already set.
        if (node.isStyle) return null;
        out = document.createTextNode(typeof node.textContent === 'string' ? node.textContent : '');
        break;
      case NODE_COMMENT:
        out = document.createComment(typeof node.textContent === 'string' ? node.textContent : '');
        break;
      case NODE_ELEMENT:
        out = element(node, inSvg);
        if (!out) return null;
        break;
      case NODE_DOCTYPE:
        return null; // the page's doctype is the rebuilt document's
      default:
        skip(`node of type ${JSON.stringify(node.type)}`);
        return null;
    }
    remember(node.id, out);
    if (out.nodeType === 1 && Array.isArray(node.childNodes)) appendChildren(out, node, depth, inSvg || Boolean(node.isSVG));
    return out;
  };

  const appendChildren = (el, node, depth, inSvg) => {
    if (el.localName === 'iframe') {
      if (node.childNodes.length) skip('iframe content (not rebuilt)');
      return;
    }
    if (el.localName === 'style' && el.textContent) return;
    for (const child of node.childNodes) {
      const built = build(child, depth + 1, inSvg);
      if (!built) continue;
      const parent = child.isShadow ? shadowRootOf(el) : el;
      if (parent) parent.appendChild(built);
    }
  };

  const shadowRootOf = (host) => {
    if (host.shadowRoot) return host.shadowRoot;
    try {
      return host.attachShadow({ mode: 'open' });
    } catch {
      skip('shadow root on an element that cannot host one');
      return null;
    }
  };

  /** Replaces the document's content with a full snapshot's tree. */
  const snapshot = (tree) => {
    nodes.clear();
    if (!tree || tree.type !== NODE_DOCUMENT || !Array.isArray(tree.childNodes)) {
      skip('full snapshot without a document node');
      return false;
    }
    remember(tree.id, document);
    const root = tree.childNodes.find((child) => child && child.type === NODE_ELEMENT);
    const html = root ? build(root, 1) : null;
    if (!html) return false;
    document.replaceChild(html, document.documentElement);
    return true;
  };

  const forget = (node) => {
    const pending = [node];
    while (pending.length) {
      const current = pending.pop();
      const id = idOf.get(current);
      if (id !== undefined && nodes.get(id) === current) nodes.delete(id);
      for (let child = current.firstChild; child; child = child.nextSibling) pending.push(child);
      if (current.shadowRoot) pending.push(current.shadowRoot);
    }
  };

  const applyStyle = (el, diff) => {
    for (const [prop, value] of Object.entries(diff)) {
      if (value === false) el.style.removeProperty(prop);
      else if (Array.isArray(value)) el.style.setProperty(prop, String(value[0]), value[1] ? String(value[1]) : '');
      else el.style.setProperty(prop, String(value));
    }
  };

  /** Applies an incremental mutation: removes, adds, texts, attributes. */
  const mutate = (data) => {
    for (const removal of Array.isArray(data.removes) ? data.removes : []) {
      const node = removal && nodes.get(removal.id);
      if (!node) { skip('removal of a node id that points nowhere'); continue; }
      forget(node);
      if (node.parentNode) node.parentNode.removeChild(node);
    }
    let adds = Array.isArray(data.adds) ? data.adds.slice() : [];
    // An add may name a parent or next sibling added later in the list:
    // those wait for another pass, as long as a pass makes progress.
    while (adds.length) {
      const waiting = [];
      for (const add of adds) {
        const parent = add && nodes.get(add.parentId);
        const hasNext = add && add.nextId !== null && add.nextId !== undefined;
        const next = hasNext ? nodes.get(add.nextId) : null;
        if (!parent || (hasNext && !next)) { waiting.push(add); continue; }
        const built = build(add.node, 1);
        if (!built) continue;
        const into = add.node && add.node.isShadow ? shadowRootOf(parent) : parent;
        if (!into) continue;
        try {
          into.insertBefore(built, next && next.parentNode === into ? next : null);
        } catch {
          skip('add the DOM refuses');
        }
      }
      if (waiting.length === adds.length) {
        for (let i = 0; i < waiting.length; i++) skip('add under a node id that points nowhere');
        break;
      }
      adds = waiting;
    }
    for (const text of Array.isArray(data.texts) ? data.texts : []) {
      const node = text && nodes.get(text.id);
      if (!node || (node.nodeType !== 3 && node.nodeType !== 8)) { skip('text change of a node id that points nowhere'); continue; }
      node.data = typeof text.value === 'string' ? text.value : '';
    }
    for (const change of Array.isArray(data.attributes) ? data.attributes : []) {
      const el = change && nodes.get(change.id);
      if (!el || el.nodeType !== 1) { skip('attribute change of a node id that points nowhere'); continue; }
      for (const [name, value] of Object.entries(change.attributes || {})) {
        if (name === 'style' && value && typeof value === 'object') applyStyle(el, value);
        else if (value === null) el.removeAttribute(name);
        else setAttribute(el, name, value);
      }
    }
  };

  return { nodes, snapshot, mutate, node: (id) => nodes.get(id) || null };
}
