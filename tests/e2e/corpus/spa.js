// A small CRM as a Preact + htm single-page app with preact-router: a
// customer list with a search box, a customer page per route, titles set
// by the routes themselves (after render, in an effect, as apps do).
import { h, render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import htm from 'htm';
import Router, { Link, route } from 'preact-router';

const html = htm.bind(h);
const BASE = '/corpus/spa';
const CUSTOMERS = [
  { id: '101', name: 'Ann Lee', email: 'ann.lee@example.com', phone: '+1 415 555 0134', plan: 'Pro', since: '2021' },
  { id: '102', name: 'Bo Chen', email: 'bo.chen@example.org', phone: '(415) 555-0199', plan: 'Team', since: '2023' },
  { id: '103', name: 'Carla Diaz', email: 'carla.diaz@example.net', phone: '+44 20 7946 0958', plan: 'Free', since: '2024' },
];

function useTitle(title) {
  useEffect(() => { document.title = title; }, [title]);
}

function CustomerList() {
  useTitle('Customers · Acme CRM');
  const [query, setQuery] = useState('');
  const shown = CUSTOMERS.filter((c) => `${c.name} ${c.email}`.toLowerCase().includes(query.toLowerCase()));
  return html`<section aria-label="Customers">
    <h1>Customers</h1>
    <label>Search customers <input type="search" value=${query} onInput=${(e) => setQuery(e.target.value)} /></label>
    <ul aria-label="Customer list">
      ${shown.map((c) => html`<li key=${c.id}><${Link} href=${`${BASE}/customers/${c.id}`}>${c.name}<//> — ${c.plan}</li>`)}
    </ul>
  </section>`;
}

function CustomerPage({ id }) {
  const customer = CUSTOMERS.find((c) => c.id === id);
  const [loaded, setLoaded] = useState(null);
  useTitle(customer ? `${customer.name} · Customers` : 'Not found · Acme CRM');
  useEffect(() => {
    // The details come from the server a moment later.
    const timer = setTimeout(() => setLoaded(customer), 150);
    return () => clearTimeout(timer);
  }, [id]);
  if (!customer) return html`<p role="alert">No such customer</p>`;
  return html`<article aria-label="Customer">
    <h1>${customer.name}</h1>
    ${loaded ? html`<dl><dt>Plan</dt><dd>${loaded.plan}</dd><dt>E-mail</dt><dd>${loaded.email}</dd><dt>Phone</dt><dd>${loaded.phone}</dd><dt>Customer since</dt><dd>${loaded.since}</dd></dl>`
             : html`<p aria-busy="true">Loading…</p>`}
    <button onClick=${() => route(`${BASE}/`)}>All customers</button>
  </article>`;
}

function App() {
  return html`<header><nav aria-label="Main"><${Link} href=${`${BASE}/`}>Customers<//></nav></header>
    <main><${Router}>
      <${CustomerList} path=${`${BASE}/`} />
      <${CustomerPage} path=${`${BASE}/customers/:id`} />
    <//></main>`;
}

render(html`<${App} />`, document.getElementById('app'));
