// Building and updating the DOM safely. Every value the dashboard shows can be user input (names,
// references, memos, bodies), so elements are made with createElement and values set with textContent
// only; nothing with data goes through innerHTML (docs/dashboard.md#escaping). The page's Content Security
// Policy also forbids inline script, as a second line of defence.

export const $ = (selector) => document.querySelector(selector);

/** Build an element. Strings and numbers among children become text nodes: never parsed as HTML. */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') element.className = value;
    else if (key === 'text') element.textContent = String(value);
    else if (key === 'on') for (const [event, handler] of Object.entries(value)) element.addEventListener(event, handler);
    else if (key === 'dataset') Object.assign(element.dataset, value);
    else if (key.startsWith('on')) throw new Error('use the "on" property for listeners');
    else if (key in element && typeof value !== 'string') element[key] = value;
    else element.setAttribute(key, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** replaceChildren that skips null/undefined/false (the DOM would print them as text). */
export function replace(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

export function chip(value, kind = String(value).toLowerCase()) {
  return h('span', { class: `chip chip-${kind.replace(/[^a-z0-9_-]/gi, '')}`, text: value });
}

/** One label and value of a summary list (<dl>). */
export function summaryRow(label, ...value) {
  return h('div', {}, h('dt', { text: label }), h('dd', {}, ...value));
}

export function setResult(container, kind, ...content) {
  replace(container, ...content);
  container.className = `result result-${kind}`;
  container.setAttribute('role', kind === 'error' ? 'alert' : 'status');
}

/** The error body of interface 7.1 as readable nodes: message, then each validation error. */
export function errorNodes(status, body) {
  const message = body && typeof body === 'object' && typeof body.message === 'string' ? body.message : typeof body === 'string' && body ? body : 'Request failed';
  const nodes = [h('p', {}, h('strong', { text: `${status}` }), ' ', message)];
  if (body && typeof body === 'object' && body.errorCode) nodes.push(h('p', { class: 'muted', text: `errorCode ${body.errorCode}` }));
  const list = body && typeof body === 'object' && Array.isArray(body.validationErrors) ? body.validationErrors : [];
  if (list.length > 0) {
    nodes.push(
      h(
        'ul',
        { class: 'validation' },
        list.map((item) => h('li', {}, item.fieldRef ? h('code', { text: item.fieldRef }) : null, item.fieldRef ? ' ' : '', `${item.type ?? ''}: ${item.message ?? ''}`)),
      ),
    );
  }
  return nodes;
}
