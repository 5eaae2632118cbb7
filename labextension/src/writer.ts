/**
 * One writer per record: which page writes a flow's record into its notebook.
 *
 * The kernel addresses each `save` to the page that ran (or resumed) the
 * flow's cell, by this tab's id (`pageId`, kept in `sessionStorage` so a reload
 * keeps it) once a restore told the kernel, else by the client id of the cell's
 * execute request.  Under jupyter-collaboration the pages share one model, so
 * the record is written once; a second plain tab that never showed the flow
 * leaves its copy as it is.
 */

import { isObject } from './common';

/** Key of this browser tab's id in `sessionStorage`. */
export const PAGE_KEY = 'mcp-notebook-page';

/** Where a tab keeps its id (the browser's `sessionStorage`; a map in tests). */
export interface IPageStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/**
 * This tab's id: made once and kept in `sessionStorage`, so a reload of the
 * tab keeps it and every other tab has its own.  The kernel names the page
 * that ran a flow's cell as the one writer of its record (`writer`), by this
 * id and by the kernel connection's client id.
 */
export function pageId(storage?: IPageStorage | null): string {
  let store: IPageStorage | null = storage ?? null;
  if (!store) {
    try {
      store = window.sessionStorage;
    } catch {
      store = null;
    }
  }
  const kept = store?.getItem(PAGE_KEY);
  if (kept && /^[A-Za-z0-9-]{8,64}$/.test(kept)) {
    return kept;
  }
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes); // also where randomUUID is not (a page served over plain http)
  const made = Array.from(bytes, b => b.toString(16).padStart(2, '0')).join('');
  try {
    store?.setItem(PAGE_KEY, made);
  } catch {
    // a tab without storage keeps its id until it reloads
  }
  return made;
}

/** Who this page is to the kernel: its tab id and its kernel connection's client id. */
export interface ISelf {
  page: string;
  client: string;
}

/**
 * Whether a `save` is this page's to write.  The kernel addresses each record
 * to the page that ran (or resumed) its flow: by tab id once it knows it, else
 * by the client id of the cell's execute request.  A save without a writer
 * (an older kernel side, a flow begun outside a cell) is written by every page,
 * as before.  Deletes are never addressed: every page drops the record it has.
 */
export function addressedHere(writer: unknown, self: ISelf | undefined): boolean {
  if (!self || !isObject(writer)) {
    return true;
  }
  if (typeof writer.page === 'string' && writer.page) {
    return writer.page === self.page;
  }
  if (typeof writer.client === 'string' && writer.client) {
    return writer.client === self.client;
  }
  return true;
}
