// What an element is and what it is called, the way assistive technology
// reads it: roles, accessible names, the context a click happened in (the
// table row, or the named container), the state a click left, and the text
// snapshot of a dialog. Pure reads of the DOM; never an input's value as a
// name, never what the user typed.

import {
  CONTROL_ELEMENTS, INLINE_ELEMENTS, LIMITS, SPACES_RE, clean, closestComposed, cut, flatParent,
  hasLayoutSize, hiddenByMarkup, hiddenByStyle, isIgnoredElement, slotContent, textOf,
} from './dom.js';

const ACTIONABLE_ROLES = new Set([
  'button', 'link', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab',
  'checkbox', 'radio', 'combobox', 'textbox', 'searchbox', 'switch', 'row',
  'option', 'slider', 'spinbutton', 'listbox', 'treeitem',
  // Not widgets in ARIA's sense, but a click on one does something in real
  // tables: it sorts the column.
  'columnheader',
]);

// Roles whose accessible name comes from their content (WAI-ARIA 1.2 "name
// from: contents").
const NAME_FROM_CONTENT_ROLES = new Set([
  'button', 'link', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab',
  'checkbox', 'radio', 'switch', 'option', 'row', 'cell', 'gridcell',
  'columnheader', 'rowheader', 'treeitem', 'heading', 'tooltip',
]);

const INPUT_ROLES = {
  checkbox: 'checkbox', radio: 'radio', button: 'button', submit: 'button',
  reset: 'button', image: 'button', range: 'slider', number: 'spinbutton',
  search: 'searchbox', hidden: '', file: 'button', color: 'button',
};

const CONTEXT_KINDS_BY_ROLE = {
  toolbar: 'toolbar', group: 'group', radiogroup: 'group', dialog: 'dialog',
  alertdialog: 'dialog', menu: 'menu', menubar: 'menu', tablist: 'tablist',
  form: 'form', navigation: 'navigation', region: 'region', list: 'list',
  listbox: 'list',
};

const SENSITIVE_AUTOCOMPLETE = new Set([
  'cc-number', 'cc-csc', 'cc-exp', 'cc-exp-month', 'cc-exp-year',
  'one-time-code', 'current-password', 'new-password',
]);

export const CHOICE_INPUT_TYPES = new Set(['checkbox', 'radio']);
const BUTTON_INPUT_TYPES = new Set(['button', 'submit', 'reset']);
const CELL_ROLES = new Set(['cell', 'gridcell', 'rowheader', 'columnheader']);
const SORT_VALUES = new Set(['ascending', 'descending', 'none', 'other']);

// ---------------------------------------------------------------- roles

/** The native role of a table cell: a header cell of the column or row
 *  it heads, or a data cell. */
function cellRoleOf(el) {
  const table = el.closest('table');
  const grid = table && table.getAttribute('role') === 'grid';
  if (el.localName === 'th') {
    const scope = el.getAttribute('scope');
    if (scope === 'row' || scope === 'rowgroup') return 'rowheader';
    if (scope === 'col' || scope === 'colgroup' || (el.parentElement && el.parentElement.parentElement &&
        el.parentElement.parentElement.localName === 'thead')) return 'columnheader';
    // A th in the body without scope heads its row when the row has data
    // cells, else its column.
    const row = el.parentElement;
    return row && Array.from(row.cells).some((cell) => cell.localName === 'td') ? 'rowheader' : 'columnheader';
  }
  return grid ? 'gridcell' : 'cell';
}

/** The ARIA role of el: its explicit role, else the native one, else ''. */
export function roleOf(el) {
  const explicit = el.getAttribute('role');
  if (explicit) return explicit.trim().split(' ')[0].toLowerCase();
  return nativeRoleOf(el);
}

/** The role el's element gives it, whatever role it was given. */
function nativeRoleOf(el) {
  switch (el.localName) {
    case 'a': case 'area': return el.hasAttribute('href') ? 'link' : '';
    case 'button': case 'summary': return 'button';
    case 'select': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
    case 'textarea': return 'textbox';
    case 'option': return 'option';
    case 'dialog': return 'dialog';
    case 'nav': return 'navigation';
    case 'form': return 'form';
    case 'fieldset': return 'group';
    case 'ul': case 'ol': case 'menu': return 'list';
    case 'th': case 'td': return cellRoleOf(el);
    case 'section': return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ? 'region' : '';
    case 'input': {
      const type = el.type;
      if (type in INPUT_ROLES) return INPUT_ROLES[type];
      return el.hasAttribute('list') ? 'combobox' : 'textbox';
    }
    default:
      return el.isContentEditable && el.contentEditable !== 'inherit' ? 'textbox' : '';
  }
}

/** True for an element the browser makes operable whatever role it is
 *  given (a web component's <button role="listitem">): a button, a link
 *  with an address, a form control, a summary. */
function isNativeControl(el) {
  switch (el.localName) {
    case 'button': case 'select': case 'textarea': case 'summary': return true;
    case 'a': case 'area': return el.hasAttribute('href');
    case 'input': return el.type !== 'hidden';
    default: return false;
  }
}

/** True when el opens something on click without being a widget by role:
 *  the trigger of a custom select or menu (aria-haspopup, aria-expanded). */
function isPopupTrigger(el) {
  const popup = el.getAttribute('aria-haspopup');
  if (popup && popup !== 'false') return true;
  return el.hasAttribute('aria-expanded') && el.hasAttribute('aria-controls');
}

// How many levels above a drawn option its list's accessibility listbox
// may sit (a virtual list's item, its holder, the list, their wrapper).
const DRAWN_OPTION_DEPTH = 8;

/** True when el is clipped to nothing: a box of no size that hides what
 *  overflows it. The accessibility tree still reads it (a list kept for
 *  screen readers); the user sees none of it. */
export function isClippedAway(el) {
  if (hasLayoutSize(el)) return false;
  const overflow = getComputedStyle(el).overflow;
  return overflow.startsWith('hidden') || overflow.startsWith('clip');
}

/**
 * The listbox an item drawn without a role stands for: a select that keeps
 * its accessibility listbox at no size (only screen readers read it) and
 * draws its options as plain elements next to it, each saying whether it
 * is selected (aria-selected). Such an item is one of that listbox's
 * options, as the user sees it. Null for anything else.
 */
export function drawnOptionList(el) {
  if (el.hasAttribute('role') || !el.hasAttribute('aria-selected')) return null;
  let node = el.parentElement;
  for (let depth = 0; node && depth < DRAWN_OPTION_DEPTH; depth++, node = node.parentElement) {
    const list = node.querySelector(':scope > [role="listbox"]');
    if (list) return isClippedAway(list) ? list : null;
  }
  return null;
}

/** The role a click on el reports: its role, or for a popup trigger
 *  without one, what it acts as. */
export function actionRoleOf(el) {
  const role = roleOf(el);
  if (!ACTIONABLE_ROLES.has(role) && isNativeControl(el)) return nativeRoleOf(el);
  if (role) return role;
  if (drawnOptionList(el)) return 'option';
  if (!isPopupTrigger(el)) return role;
  return el.getAttribute('aria-haspopup') === 'listbox' ? 'combobox' : 'button';
}

/** True when a click on el is a user action worth reporting. A native table
 *  row is not: only an explicit role="row" makes a row clickable; a native
 *  header cell is, when it heads a column. */
export function isActionable(el) {
  if (el.localName === 'tr' && !el.hasAttribute('role')) return false;
  if (el.localName === 'td') return false;
  if (isNativeControl(el)) return true;
  const role = roleOf(el);
  if (role === 'columnheader') return isInteractiveHeader(el);
  if (ACTIONABLE_ROLES.has(role)) return true;
  return isPopupTrigger(el) || (!role && drawnOptionList(el) !== null);
}

// How far above a pressed element the box a custom select draws around
// its input may reach, and how big it may be (a box, not a section).
const SELECT_BOX_DEPTH = 3;
const SELECT_BOX_ELEMENTS_MAX = 40;

/**
 * The combobox a press on el is about when el is part of the box a custom
 * select draws around its input (its shown value, its placeholder, its
 * arrow): the nearest ancestor that holds a combobox is small and holds
 * that one and no other control. The user pressed the select they see.
 * Null otherwise.
 */
export function comboboxOfBox(el) {
  let node = el;
  for (let depth = 0; node && depth <= SELECT_BOX_DEPTH; depth++, node = node.parentElement) {
    if (node.getElementsByTagName('*').length > SELECT_BOX_ELEMENTS_MAX) return null;
    const combobox = node.querySelector('[role="combobox"]');
    if (!combobox) continue;
    for (const other of node.querySelectorAll('*')) {
      if (other !== combobox && !combobox.contains(other) && isActionable(other)) return null;
    }
    return combobox;
  }
  return null;
}

/** A column header a click can act on: one that says its sort order, takes
 *  focus (grids rove focus with tabindex, even -1), or holds a control.
 *  A plain header of a static table is not. */
function isInteractiveHeader(el) {
  return el.hasAttribute('aria-sort') || el.hasAttribute('tabindex') ||
    el.querySelector('button,[role="button"]') !== null;
}

// ---------------------------------------------------------------- names

function textOfIds(el, ids) {
  const root = el.getRootNode();
  const parts = [];
  for (const id of ids.trim().split(SPACES_RE)) {
    const target = root.getElementById ? root.getElementById(id) : el.ownerDocument.getElementById(id);
    if (target) {
      const label = target.getAttribute('aria-label');
      parts.push(label || textOf(target, LIMITS.NAME_MAX_CHARS));
    }
  }
  return clean(parts.join(' '));
}

/** The cell that names a row: its row header, else its first cell with
 *  text. */
function rowNameOf(row) {
  const cells = cellsOfRow(row);
  const header = cells.find((cell) => roleOf(cell) === 'rowheader');
  for (const cell of header ? [header] : cells) {
    if (cell.hasAttribute('data-sensitive') || isIgnoredElement(cell)) continue;
    const text = textOf(cell, LIMITS.NAME_MAX_CHARS, true);
    if (text) return text;
  }
  return '';
}

/** A tree item's own label: its content without the group of items
 *  nested in it (a folder is "Projects", not every file under it). */
function treeItemLabel(item) {
  const parts = [];
  for (const child of item.childNodes) {
    if (child.nodeType === 3) parts.push(child.data);
    else if (child.nodeType === 1 && child.getAttribute('role') !== 'group' && roleOf(child) !== 'treeitem') {
      parts.push(' ', textOf(child, LIMITS.NAME_MAX_CHARS), ' ');
    }
  }
  return cut(clean(parts.join('')), LIMITS.NAME_MAX_CHARS);
}

/** The label a custom select or combobox took from the native control it
 *  stands in for (the native one hidden, its label now pointing at the
 *  library's own input, whose id the library made from the native one's:
 *  "country" → "country-ts-control"): what the user sees it called. */
function standInLabel(el) {
  if (!el.id) return '';
  const root = el.getRootNode();
  if (!root.querySelector) return '';
  const id = CSS.escape(el.id);
  const label = root.querySelector(`label[for^="${id}-"],label[for^="${id}_"]`);
  return label ? textOf(label, LIMITS.NAME_MAX_CHARS, true) : '';
}

/**
 * The accessible name of el, after the accessible-name computation in
 * simplified form: aria-labelledby, aria-label, associated <label>s, alt,
 * content for roles named from content, title, placeholder. Returns '' when
 * there is none. Never returns what the user typed into a field. A row is
 * named by its header cell (or first cell), not by all its text: the cells
 * are its context.
 */
export function accessibleName(el, role = roleOf(el)) {
  const max = LIMITS.NAME_MAX_CHARS;
  const labelledBy = el.getAttribute('aria-labelledby');
  if (labelledBy) {
    const name = textOfIds(el, labelledBy);
    if (name) return cut(name, max);
  }
  const ariaLabel = el.getAttribute('aria-label');
  if (ariaLabel && clean(ariaLabel)) return cut(clean(ariaLabel), max);
  if (el.labels && el.labels.length) {
    const name = clean(Array.from(el.labels, (label) => textOf(label, max, true)).join(' '));
    if (name) return cut(name, max);
  }
  const tag = el.localName;
  if (tag === 'img' || tag === 'area' || (tag === 'input' && el.type === 'image')) {
    const alt = clean(el.getAttribute('alt') || '');
    if (alt) return cut(alt, max);
  }
  if (tag === 'fieldset') {
    const legend = el.querySelector(':scope > legend');
    if (legend) { const name = textOf(legend, max); if (name) return name; }
  }
  // A button-type input shows its value as its caption: it is the page's
  // text, not the user's, so it is the one value that may name an element.
  if (tag === 'input' && BUTTON_INPUT_TYPES.has(el.type)) {
    const caption = clean(el.value || '');
    if (caption) return cut(caption, max);
  }
  if (role === 'row') {
    const name = rowNameOf(el);
    if (name) return name;
  } else if (role === 'treeitem') {
    const name = treeItemLabel(el);
    if (name) return name;
  } else if (NAME_FROM_CONTENT_ROLES.has(role) && tag !== 'input') {
    const name = textOf(el, max, role === 'columnheader' || role === 'rowheader');
    if (name) return name;
  }
  if (CONTROL_ELEMENTS.has(tag)) {
    const name = standInLabel(el);
    if (name) return cut(name, max);
  }
  const title = clean(el.getAttribute('title') || '');
  if (title) return cut(title, max);
  const placeholder = clean(el.getAttribute('placeholder') || '');
  if (placeholder) return cut(placeholder, max);
  if (CONTROLLED_POPUP_ROLES.has(roleOf(el))) return controllerName(el);
  return '';
}

// Popups a control opens, which assistive technology announces by that
// control's name when they have none of their own.
const CONTROLLED_POPUP_ROLES = new Set(['listbox', 'menu', 'tree', 'grid', 'dialog']);

/** The name of the control that opens the popup el (aria-controls or
 *  aria-owns naming it): a select's listbox is called what the select is. */
function controllerName(el) {
  if (!el.id) return '';
  const root = el.getRootNode();
  if (!root.querySelector) return '';
  const id = CSS.escape(el.id);
  const controller = root.querySelector(`[aria-controls~="${id}"],[aria-owns~="${id}"]`);
  if (!controller || controller === el || el.contains(controller)) return '';
  const role = roleOf(controller);
  return CONTROLLED_POPUP_ROLES.has(role) ? '' : accessibleName(controller, role);
}

// ---------------------------------------------------------------- sensitivity

/**
 * Decides whether el must be reported as sensitive. `knownSecrets` is a
 * WeakSet of fields seen as password fields before: a field that was a
 * password once stays sensitive when a "show password" button makes it a
 * text field.
 */
export function isSensitive(el, knownSecrets) {
  if (knownSecrets.has(el)) return true;
  if (el.localName === 'input' && el.type === 'password') {
    knownSecrets.add(el);
    return true;
  }
  const autocomplete = el.getAttribute('autocomplete');
  if (autocomplete) {
    for (const token of autocomplete.toLowerCase().split(SPACES_RE)) {
      if (SENSITIVE_AUTOCOMPLETE.has(token)) return true;
    }
  }
  return closestComposed(el, '[data-sensitive]') !== null;
}

/** Adds every password field under node (node included) to knownSecrets. */
export function rememberPasswordFields(node, knownSecrets) {
  if (node.localName === 'input' && node.type === 'password') knownSecrets.add(node);
  if (node.firstElementChild) {
    for (const field of node.querySelectorAll('input[type="password"]')) knownSecrets.add(field);
  }
}

/** Used where no tracker state is at hand (snapshots): the markup alone. */
export function isSensitiveField(el) {
  return (el.localName === 'input' && el.type === 'password') ||
    closestComposed(el, '[data-sensitive]') !== null;
}

// ---------------------------------------------------------------- rows and context

export function isRow(el) {
  return el.localName === 'tr' || el.getAttribute('role') === 'row';
}

/**
 * The cells of a row as the accessibility tree has them: the cell,
 * gridcell and header descendants (native td/th too) whose row is this
 * one, however deep the library wrapped them in presentational elements.
 */
export function cellsOfRow(row) {
  if (row.localName === 'tr' && !row.querySelector('[role="row"]')) {
    const native = Array.from(row.cells);
    if (native.length) return native;
  }
  const cells = [];
  for (const el of row.querySelectorAll('[role="cell"],[role="gridcell"],[role="rowheader"],[role="columnheader"],td,th')) {
    const explicit = el.getAttribute('role');
    if (explicit && !CELL_ROLES.has(explicit)) continue;
    if (el.parentElement && el.parentElement.closest('tr,[role="row"]') === row) cells.push(el);
  }
  return cells;
}

/** True for a row of column headers: it names the columns, it is not a
 *  row of data a click could be about. */
function isHeaderRow(row, cells) {
  return cells.length > 0 && cells.every((cell) => roleOf(cell) === 'columnheader');
}

function rowCellTexts(cells) {
  const texts = [];
  for (const cell of cells) {
    if (texts.length >= LIMITS.CTX_CELLS_MAX) break;
    if (isIgnoredElement(cell) || cell.hasAttribute('data-sensitive')) continue;
    const text = textOf(cell, LIMITS.CELL_MAX_CHARS, true);
    if (text) texts.push(text);
  }
  return texts;
}

/** Whether row context applies to `row`: always, never, or when the table
 *  or any element around it (the container the developer controls, not
 *  only the element a grid library generates) opts in. */
function rowContextApplies(row, rowContext) {
  if (rowContext === 'always') return true;
  if (rowContext === 'never') return false;
  const marked = closestComposed(row, '[data-track-row-context]');
  return marked !== null && marked.getAttribute('data-track-row-context') !== 'false';
}

function contextKindOf(el) {
  if (el.localName === 'dialog') return 'dialog';
  return CONTEXT_KINDS_BY_ROLE[roleOf(el)] || '';
}

/**
 * The context of a click or change on el: the table row it sits in (el
 * itself when it is a row) when row context applies to that table, or the
 * nearest named container of a kind the protocol knows, in the flat tree
 * (a button slotted into a web component's dialog is in that dialog). A
 * header row is no row context: its cells are column names. Returns
 * undefined when there is none.
 */
export function contextOf(el, rowContext) {
  const drawnList = drawnOptionList(el);
  if (drawnList) {
    const name = accessibleName(drawnList, 'listbox');
    return name ? { kind: 'list', name: cut(name, LIMITS.CELL_MAX_CHARS) } : undefined;
  }
  for (let node = isRow(el) ? el : flatParent(el); node; node = flatParent(node)) {
    if (node.nodeType !== 1) continue;
    if (isRow(node)) {
      const cells = cellsOfRow(node);
      if (!isHeaderRow(node, cells) && rowContextApplies(node, rowContext)) {
        const texts = rowCellTexts(cells);
        if (texts.length) return { kind: 'row', cells: texts };
      }
      continue;
    }
    const kind = contextKindOf(node);
    if (!kind) continue;
    const name = accessibleName(node, 'none');
    if (name) return { kind, name: cut(name, LIMITS.CELL_MAX_CHARS) };
  }
  return undefined;
}

/** The column header around el when el is a control inside a sortable
 *  header (a sort button): the click is about the column. */
export function sortableHeaderAround(el) {
  const header = closestComposed(el, '[role="columnheader"],th');
  if (!header || header === el || roleOf(header) !== 'columnheader') return null;
  const name = el.getAttribute('aria-label') || el.getAttribute('title') || '';
  return header.hasAttribute('aria-sort') || /\bsort/i.test(name) || /\bsort/i.test(el.className || '') ? header : null;
}

// ---------------------------------------------------------------- state

/** The state of el that a click may have changed, read after the click's
 *  default action and the page's own handlers; undefined when none applies. */
export function clickStateOf(el) {
  let state;
  const put = (key, value) => { (state ||= {})[key] = value; };
  if (el.localName === 'input' && CHOICE_INPUT_TYPES.has(el.type)) {
    put('checked', el.checked);
  } else {
    const checked = el.getAttribute('aria-checked');
    if (checked === 'true' || checked === 'false') put('checked', checked === 'true');
  }
  const expanded = el.getAttribute('aria-expanded');
  if (expanded === 'true' || expanded === 'false') put('expanded', expanded === 'true');
  else if (el.localName === 'summary' && el.parentElement && el.parentElement.localName === 'details') {
    put('expanded', el.parentElement.open);
  }
  const selected = el.getAttribute('aria-selected');
  if (selected === 'true' || selected === 'false') put('selected', selected === 'true');
  else if (el.localName === 'option') put('selected', el.selected);
  const pressed = el.getAttribute('aria-pressed');
  if (pressed === 'true' || pressed === 'false') put('pressed', pressed === 'true');
  return state;
}

/** A column header's sort order (aria-sort) after a click; undefined when
 *  the header does not say. */
export function sortOf(el) {
  const sort = el.getAttribute('aria-sort');
  return sort && SORT_VALUES.has(sort) ? sort : undefined;
}

// ---------------------------------------------------------------- dialog snapshots

export function choiceValueOf(control) {
  if (control.localName === 'select') {
    return clean(Array.from(control.selectedOptions, (option) => option.label || option.text).join(', '));
  }
  if (control.localName === 'input' && control.type === 'checkbox') return control.checked ? 'checked' : 'unchecked';
  if (control.localName === 'input' && control.type === 'radio') return control.checked ? 'selected' : '';
  return null;
}

/**
 * A compact text snapshot of what a dialog shows: its visible text in
 * segments, description lists and two-cell rows as "Label: value", choice
 * controls as "Label: choice", joined with " · " and cut at the protocol's
 * maximum. Reads the composed tree (shadow roots, slotted content). Leaves
 * out the dialog's own name, buttons, text fields' values, sensitive
 * subtrees and the elements in the set `skip` (a list kept for screen
 * readers beside the one drawn, parts on their way out).
 */
export function snapshotText(container, dialogName, skip = new Set()) {
  const max = LIMITS.DIALOG_TEXT_MAX_CHARS;
  const segments = [];
  let length = 0;
  let current = [];
  const handled = new Set();
  const push = (text) => {
    const segment = clean(text);
    if (segment && segment !== dialogName && length < max) {
      segments.push(segment);
      length += segment.length + 3;
    }
  };
  const endSegment = () => {
    if (current.length) { push(current.join('')); current = []; }
  };
  const visit = (child) => {
    if (child.nodeType === 3) { current.push(child.data); return; }
    if (child.nodeType !== 1 || skip.has(child)) return;
    const tag = child.localName;
    if (hiddenByMarkup(child) || child.hasAttribute('data-sensitive') || isIgnoredElement(child)) return;
    if (tag === 'button' || child.getAttribute('role') === 'button') return;
    // What the accessibility tree leaves out, style included (a row the
    // page hides with a class, a check box hidden by CSS).
    if (hiddenByStyle(child)) return;
    if (tag === 'slot') {
      for (const assigned of slotContent(child)) visit(assigned);
      return;
    }
    if (tag === 'dl') {
      endSegment();
      let term = '';
      for (const item of child.children) {
        if (item.localName === 'dt') term = textOf(item, LIMITS.CELL_MAX_CHARS);
        else if (item.localName === 'dd') push(term ? `${term}: ${textOf(item, LIMITS.CELL_MAX_CHARS)}` : textOf(item, LIMITS.CELL_MAX_CHARS));
      }
      return;
    }
    if (tag === 'tr') {
      endSegment();
      const cells = Array.from(child.cells, (cell) => textOf(cell, LIMITS.CELL_MAX_CHARS, true)).filter(Boolean);
      push(cells.length === 2 ? `${cells[0]}: ${cells[1]}` : cells.join(' | '));
      return;
    }
    if (tag === 'label') {
      endSegment();
      const control = child.control;
      if (control && !isSensitiveField(control)) {
        handled.add(control);
        const value = hiddenByStyle(control) ? null : choiceValueOf(control);
        // A label with no words (an icon's) names nothing: the control's
        // own name, or nothing at all, rather than ": checked".
        const label = textOf(child, LIMITS.CELL_MAX_CHARS, true) || accessibleName(control);
        if (value && label) push(`${label}: ${value}`);
      }
      return;
    }
    if (CONTROL_ELEMENTS.has(tag)) {
      if (!handled.has(child) && !isSensitiveField(child)) {
        const value = choiceValueOf(child);
        const name = accessibleName(child);
        if (value && name) { endSegment(); push(`${name}: ${value}`); }
      }
      return;
    }
    if (tag === 'img') {
      const alt = child.getAttribute('alt');
      if (alt) current.push(' ', alt, ' ');
      return;
    }
    const inline = INLINE_ELEMENTS.has(tag);
    if (!inline) endSegment();
    walk(child.shadowRoot || child);
    if (!inline) endSegment();
  };
  const walk = (node) => {
    for (let child = node.firstChild; child && length < max; child = child.nextSibling) visit(child);
  };
  walk(container.shadowRoot || container);
  endSegment();
  return cut(segments.join(' · '), max);
}
