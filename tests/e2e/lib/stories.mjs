// The corpus pages' stories (tests/e2e/corpus), their steps alone: how a
// user drives each page, waiting on what the page and the daemon show.
// The corpus tests assert each story's trace; corpus-rrweb.test.mjs plays
// the same steps with rrweb recording beside the sender (issue 26). Each
// story: the page's `path`, `ready` (the page loaded and settled) and
// `drive` (the user's steps, ending settled).

import assert from 'node:assert/strict';

import { SENTINELS } from './story.mjs';

/** Waits for the page's first navigate line and its first stable mark. */
async function loaded(run, tab, path) {
  await run.until(tab, `navigate ${path}`);
  await run.stable(tab);
}

export const STORIES = {
  bootstrap: {
    path: '/corpus/checkout-bootstrap.html',
    async ready(run, tab) { await loaded(run, tab, '/corpus/checkout-bootstrap.html'); },
    async drive(run, tab, page) {
      await run.act(tab, () => page.getByRole('button', { name: 'Cart (2)' }).click());
      await page.locator('#cart.show').waitFor();
      await run.act(tab, () => page.locator('#cart .btn-close').click());
      await page.locator('#cart:not(.show)').waitFor({ state: 'attached' });
      await run.act(tab, () => page.getByRole('button', { name: 'Place order' }).click());
      await page.locator('form.was-validated').waitFor();
      await page.fill('#email', SENTINELS[0]);
      await page.fill('#card', '4111 1111 1111 1111');
      await run.act(tab, () => page.getByLabel('I accept the terms').check());
      await run.act(tab, () => page.getByRole('button', { name: 'Place order' }).click());
      await run.until(tab, '"Order placed"');
      await run.act(tab, () => page.getByRole('button', { name: 'Done' }).click());
      await run.until(tab, 'closed dialog "Order placed"');
    },
  },
  aggrid: {
    path: '/corpus/orders-aggrid.html',
    async ready(run, tab, page) {
      await page.waitForSelector('[row-id="4411"] [col-id="customer"]');
      await loaded(run, tab, '/corpus/orders-aggrid.html');
    },
    async drive(run, tab, page) {
      await page.fill('#quick-filter', 'ann.lee@example.com');
      await page.keyboard.press('Tab');
      await page.click('[role="columnheader"][col-id="total"]');
      await run.until(tab, '"Total"');
      await run.stable(tab);
      await page.locator('[row-id="4411"]').getByRole('button', { name: 'Details' }).click();
      await run.until(tab, 'opened dialog "Order 4411"');
      await run.stable(tab);
      await page.getByRole('button', { name: 'Close' }).click();
      await run.until(tab, 'closed dialog');
      await run.stable(tab);
      await page.locator('[row-id="4411"]').getByRole('button', { name: 'Refund' }).click();
      await run.until(tab, 'order.refund_failed');
      await run.until(tab, '→ status "Refund of');
      await run.stable(tab);
      // A dead click: the daemon settles it once 2 s passed with no response.
      const dead = await run.act(tab, () => page.click('[row-id="4411"] [col-id="customer"]'), 8000);
      assert.equal(dead.after, 'settled', `the dead click settles: ${JSON.stringify(dead)}`);
      await run.until(tab, 'click row "4411"');
    },
  },
  antd: {
    path: '/corpus/orders-antd.html',
    async ready(run, tab, page) {
      await page.waitForSelector('tr[data-row-key="4411"]');
      await loaded(run, tab, '/corpus/orders-antd.html');
    },
    async drive(run, tab, page) {
      await run.act(tab, () => page.locator('.ant-select').first().click());
      await run.act(tab, () => page.locator('.ant-select-item-option', { hasText: 'Paid' }).click());
      await page.waitForSelector('tr[data-row-key="4412"]', { state: 'detached' });
      await run.until(tab, 'closed listbox "Status"');
      await run.act(tab, () => page.locator('tr[data-row-key="4411"]').getByRole('button', { name: 'Refund' }).click());
      await run.until(tab, 'Refund order 4411');
      await run.act(tab, () => page.locator('.ant-modal-footer .ant-btn-primary').click());
      await page.waitForSelector('text=Choose a reason');
      await page.getByLabel('Amount').fill('30');
      await run.act(tab, () => page.locator('.ant-modal .ant-select').click());
      await run.act(tab, () => page.locator('.ant-select-item-option', { hasText: 'Damaged in transit' }).click());
      await run.until(tab, 'closed listbox "Reason"');
      await page.getByLabel('Note to customer').fill(SENTINELS[3]);
      await run.act(tab, () => page.locator('.ant-modal-footer .ant-btn-primary').click());
      await run.until(tab, 'closed dialog "Refund order 4411"');
    },
  },
  elementPlus: {
    path: '/corpus/customers-element-plus.html',
    async ready(run, tab, page) {
      await page.waitForSelector('.el-table__row');
      await loaded(run, tab, '/corpus/customers-element-plus.html');
    },
    async drive(run, tab, page) {
      await run.act(tab, () => page.locator('.el-table__row', { hasText: 'C-103' }).getByRole('button', { name: 'Edit' }).click());
      await run.until(tab, '"Edit Carla Diaz"');
      await run.act(tab, () => page.getByRole('button', { name: 'Save' }).click());
      await page.waitForSelector('text=Enter a credit limit');
      await run.act(tab, () => page.locator('.el-dialog .el-select').click());
      await run.act(tab, () => page.locator('.el-select-dropdown__item', { hasText: 'Partner' }).click());
      // The list fades out before the user moves on.
      await run.until(tab, 'closed listbox "Segment"');
      await page.getByLabel('Credit limit').fill('2500');
      await run.act(tab, () => page.getByRole('button', { name: 'Save' }).click());
      await run.until(tab, 'Saved Carla Diaz');
      await run.until(tab, 'closed dialog "Edit Carla Diaz"');
    },
  },
  gridjs: {
    path: '/corpus/customers-gridjs.html',
    async ready(run, tab, page) {
      await page.waitForSelector('.gridjs-tbody .open-customer');
      await loaded(run, tab, '/corpus/customers-gridjs.html');
    },
    async drive(run, tab, page) {
      await page.fill('.gridjs-search-input', 'bo.chen@example.org');
      await page.keyboard.press('Tab');
      await page.waitForFunction(() => document.querySelectorAll('.gridjs-tbody tr').length === 1);
      await run.stable(tab);
      // The sort button inside the header: the click is about the column.
      await page.click('th[data-column-id="orders"] button.gridjs-sort');
      await run.until(tab, 'columnheader "Orders"');
      await run.stable(tab);
      await page.getByRole('button', { name: 'Open' }).click();
      await run.until(tab, 'opened dialog "Bo Chen"');
      await run.stable(tab);
      await page.click('#customer-modal button[data-micromodal-close]');
      await run.until(tab, 'closed dialog "Bo Chen"');
      await run.stable(tab);
      for (const segment of ['VIP', 'New this month', 'At risk']) await page.getByLabel(segment).click();
      await run.until(tab, 'clicked 3×');
      await run.stable(tab);
      // The team's own dropdown: a div with aria-haspopup, no role.
      await page.click('#page-size-trigger');
      await run.until(tab, 'opened listbox');
      await run.stable(tab);
      await page.click('#page-size-list [role="option"]:has-text("25")');
      await run.until(tab, 'closed listbox');
      await run.stable(tab);
    },
  },
  shoelace: {
    path: '/corpus/invoices-shoelace.html',
    async ready(run, tab, page) {
      await page.waitForFunction(() => customElements.get('sl-dialog') && customElements.get('sl-button'));
      await loaded(run, tab, '/corpus/invoices-shoelace.html');
    },
    async drive(run, tab, page) {
      await page.locator('tr', { hasText: 'INV-9' }).locator('sl-button').click();
      await run.until(tab, 'opened dialog "Invoice INV-9"');
      await run.stable(tab);
      // The mail service takes longer than a dead click's 2 s: meanwhile the
      // button shows a spinner inside its shadow root.
      await page.locator('#remind').click();
      await run.until(tab, 'not sent: the mail service is down');
      await run.stable(tab);
      await page.locator('sl-dropdown sl-button').click();
      await run.until(tab, 'opened menu "More actions"');
      await run.stable(tab);
      await page.locator('#new-invoice').click();
      await run.until(tab, '"New invoice"');
      await run.stable(tab);
    },
  },
  spa: {
    path: '/corpus/spa/',
    async ready(run, tab, page) {
      await page.waitForSelector('text=Bo Chen');
      await loaded(run, tab, '/corpus/spa/');
    },
    async drive(run, tab, page) {
      await page.fill('input[type="search"]', 'bo.chen@example.org');
      await page.keyboard.press('Tab');
      await page.click('text=Bo Chen');
      await run.until(tab, '/corpus/spa/customers/102 "');
      await page.waitForSelector('text=Customer since');
      await run.stable(tab);
      await page.click('text=All customers');
      await run.until(tab, '→ navigated (in-app) to /corpus/spa/ "Customers · Acme CRM"\n');
      await run.stable(tab);
      await page.goBack();
      await run.until(tab, 'navigate (back/forward)');
      await run.stable(tab);
    },
  },
  tomselect: {
    path: '/corpus/address-tomselect-sweetalert.html',
    async ready(run, tab) { await loaded(run, tab, '/corpus/address-tomselect-sweetalert.html'); },
    async drive(run, tab, page) {
      await page.getByLabel('Street').fill(SENTINELS[1]);
      await run.act(tab, () => page.locator('.ts-control').click());
      await run.act(tab, () => page.locator('.ts-dropdown .option', { hasText: 'Kenya' }).click());
      await run.until(tab, 'Ships to Kenya');
      await run.act(tab, () => page.getByRole('button', { name: 'Delete address' }).click());
      await run.until(tab, '"Delete this address?"');
      await run.act(tab, () => page.getByRole('button', { name: 'Yes, delete it' }).click());
      await run.until(tab, 'opened dialog "Deleted"');
      await run.act(tab, () => page.getByRole('button', { name: 'OK' }).click());
      await run.until(tab, 'closed dialog "Deleted"');
    },
  },
  downshift: {
    path: '/corpus/ticket-downshift.html',
    async ready(run, tab, page) {
      await page.waitForSelector('input[role="combobox"]');
      await loaded(run, tab, '/corpus/ticket-downshift.html');
    },
    async drive(run, tab, page) {
      await run.act(tab, () => page.getByRole('combobox').click());
      await page.keyboard.type('sup');
      await page.getByRole('option', { name: 'Support' }).waitFor();
      // The pointer rests on the option before the press, as a user's does:
      // Downshift highlights it (aria-selected) on that move, not on the click.
      await page.getByRole('option', { name: 'Support' }).hover();
      await page.locator('[role="option"][aria-selected="true"]').waitFor();
      await run.act(tab, () => page.getByRole('option', { name: 'Support' }).click());
      await run.until(tab, 'Routed to Support');
      await run.until(tab, 'closed listbox "Assign to team"');
    },
  },
  htmx: {
    path: '/htmx/contacts',
    async ready(run, tab) { await loaded(run, tab, '/htmx/contacts'); },
    async drive(run, tab, page) {
      await run.act(tab, () => page.getByRole('link', { name: 'Edit Ann Lee' }).click());
      await run.until(tab, '"Edit Ann Lee · Acme Contacts"');
      await page.getByLabel('Phone').fill(SENTINELS[2]);
      await run.act(tab, () => page.getByRole('button', { name: 'Save' }).click());
      await run.until(tab, 'Enter a phone number');
      await page.getByLabel('Phone').fill('+1 415 555 0134');
      await run.act(tab, () => page.getByRole('button', { name: 'Save' }).click());
      await run.until(tab, 'status "Saved Ann Lee"');
      await run.act(tab, () => page.getByRole('link', { name: 'Edit Bo Chen' }).click());
      await run.until(tab, '"Edit Bo Chen · Acme Contacts"');
      await run.act(tab, () => page.goBack());
      await run.until(tab, 'navigate (back/forward)');
      await page.getByRole('link', { name: 'Edit Bo Chen' }).waitFor();
      await run.stable(tab);
    },
  },
  hostEvents: {
    path: '/corpus/checkout-host-events.html',
    async ready(run, tab) { await run.until(tab, 'checkout.started'); },
    async drive(run, tab, page) {
      await page.fill('input[name="card"]', '4111 1111 1111 1111');
      await page.fill('input[name="email"]', 'ann.lee@example.com');
      await page.click('text=Pay $120.00');
      await run.until(tab, 'checkout.payment_declined');
      await page.click('text=OK');
    },
  },
  multipage: {
    path: '/shop/orders',
    async ready(run, tab) { await loaded(run, tab, '/shop/orders'); },
    async drive(run, tab, page) {
      await page.click('text=View order 4411');
      await page.waitForURL('**/shop/orders/4411');
      await run.until(tab, 'navigated to /shop/orders/4411 "');
      await run.stable(tab);
      await page.fill('input[name="amount"]', '150');
      await page.fill('textarea[name="note"]', 'Call me on +1 415 555 0134 or ann.lee@example.com');
      await page.click('button:has-text("Refund")');
      await page.waitForURL('**/shop/orders/4411?error=*');
      await run.until(tab, 'error alert "Refund of $150.00 exceeds the captured amount of $120.00"');
      await run.stable(tab);
      await page.reload();
      await run.until(tab, 'navigate (reload)');
      await run.stable(tab);
      await page.click('text=Back to orders');
      await page.waitForURL('**/shop/orders');
      await run.until(tab, '"Back to orders" → navigated to /shop/orders "Orders · Acme Shop"\n');
      await run.stable(tab);
    },
  },
  iframe: {
    path: '/corpus/orders-with-support.html',
    async ready(run, tab, page) {
      await page.frameLocator('#support').locator('text=Send').waitFor();
      await page.waitForFunction(() => document.getElementById('support').contentWindow.tracker?.tab);
      await loaded(run, tab, '/corpus/orders-with-support.html');
    },
    async drive(run, tab, page) {
      const frame = page.frameLocator('#support');
      await page.click('#refresh');
      await run.until(tab, '→ status "Orders refreshed (1)"');
      // As a user does it (Playwright's selectOption dispatches a script's
      // change event, which the trace would rightly mark "by script").
      await frame.locator('select').focus();
      await page.keyboard.press('ArrowDown');
      await frame.locator('textarea').fill('My card 4111 1111 1111 1111 was charged twice');
      await frame.locator('button:has-text("Send")').click();
      await run.until(tab, 'support.message_sent');
      await run.stable(tab);
      await frame.locator('text=Read the FAQ').click();
      await frame.locator('text=How long do refunds take?').click();
      await run.until(tab, '"How long do refunds take?"');
      await run.stable(tab);
      await page.click('#refresh');
      await run.until(tab, '→ status "Orders refreshed (2)"');
      await run.stable(tab);
    },
  },
};
