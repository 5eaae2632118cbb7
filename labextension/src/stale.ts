/**
 * Stale forms: what a gone kernel leaves behind in the outputs.
 *
 * Forms and panels of a flow live in widgets of the kernel that showed them;
 * their root carries the class `mcp-notebook-form`.  When that kernel
 * restarts, stops or is replaced, nothing can answer them any more: the
 * extension marks each one stale (a banner saying so, its controls disabled).
 * Saved flows stay in the metadata and continue with `%mcp resume ID`.  A
 * live MCP App output is marked the same way, with App wording.
 */

import type { NotebookPanel } from '@jupyterlab/notebook';

import { APP_CLASS } from './apps/data';
import { FORM_CLASS } from './common';

/** CSS class added to a form whose kernel is gone. */
export const STALE_CLASS = 'mcp-notebook-stale';

/** CSS class of the banner inside such a form. */
export const STALE_BANNER_CLASS = 'mcp-notebook-stale-banner';

/** What happened to the kernel that showed a form. */
export type KernelGone = 'restarted' | 'stopped' | 'replaced';

const GONE_WORDS: { [why in KernelGone]: string } = {
  restarted: 'has restarted',
  stopped: 'has stopped',
  replaced: 'was replaced by another kernel'
};

/**
 * The banner of a stale form: our own text, built with text nodes only.
 */
function staleBanner(why: KernelGone, app = false): HTMLElement {
  const banner = document.createElement('div');
  banner.className = STALE_BANNER_CLASS;
  banner.setAttribute('role', 'status');
  banner.dataset.why = why;
  const parts: Array<[string, boolean]> = app
    ? [
        [
          `The kernel that showed this App ${GONE_WORDS[why]}; the App can no longer reach its server. Run the cell again (a new kernel needs `,
          false
        ],
        ['%load_ext mcp_notebook', true],
        [' first).', false]
      ]
    : [
        [
          `The kernel that asked this question ${GONE_WORDS[why]}; this form can no longer send. Run `,
          false
        ],
        ['%mcp flows', true],
        [' then ', false],
        ['%mcp resume ID', true],
        [' (saved flows continue). A new kernel needs ', false],
        ['%load_ext mcp_notebook', true],
        [' first.', false]
      ];
  for (const [text, code] of parts) {
    if (code) {
      const node = document.createElement('code');
      node.textContent = text;
      banner.appendChild(node);
    } else {
      banner.appendChild(document.createTextNode(text));
    }
  }
  return banner;
}

/** States of an App output that a gone kernel leaves stale. */
const STALE_APP_STATES = new Set(['live', 'opening', 'gone']);

/**
 * Mark every live form in the outputs of one notebook view as stale.
 *
 * Only outermost form roots get a banner (a flow's live area holds its form
 * and review panels).  A form already marked keeps its first banner.  Forms
 * shown later by the new kernel are not touched: this runs once per event.
 */
export function markStaleForms(root: ParentNode, why: KernelGone): number {
  let marked = 0;
  const forms = root.querySelectorAll<HTMLElement>(`.${FORM_CLASS}`);
  for (const form of Array.from(forms)) {
    if (form.parentElement?.closest(`.${FORM_CLASS}`)) {
      continue;
    }
    const app = form.classList.contains(APP_CLASS);
    // An App output that was not running (its text and an Activate button)
    // waits for the next kernel's connection by itself.
    if (app && !STALE_APP_STATES.has(form.dataset.appState ?? '')) {
      continue;
    }
    if (!form.classList.contains(STALE_CLASS)) {
      form.classList.add(STALE_CLASS);
      form.insertBefore(staleBanner(why, app), form.firstChild);
      marked++;
    }
    // (again on a second event: a control may have been drawn since)
    for (const control of Array.from(
      form.querySelectorAll<HTMLElement>('button, input, select, textarea')
    )) {
      (control as HTMLButtonElement).disabled = true;
      control.setAttribute('aria-disabled', 'true');
    }
  }
  return marked;
}

/** Mark the stale forms of every cell of one view (detached cells too). */
export function markPanelStale(panel: NotebookPanel, why: KernelGone): void {
  if (panel.isDisposed) {
    return;
  }
  let marked = 0;
  for (const cell of panel.content.widgets) {
    marked += markStaleForms(cell.node, why);
  }
  if (marked) {
    console.info(
      `mcp-notebook: the kernel ${GONE_WORDS[why]}; ${marked} form(s) marked stale`
    );
  }
}
