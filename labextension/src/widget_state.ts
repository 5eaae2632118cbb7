/**
 * Which saved widget models of a notebook carry their own code, and whether
 * the notebook is trusted: what `widget_guard.ts` needs to keep a received
 * notebook's saved widget state from running script in the page.
 *
 * @jupyter-widgets/jupyterlab-manager restores every model saved in
 * `metadata.widgets` when a notebook's kernel is ready, trusted or not.  Most
 * models only hold values, and their views show only in outputs of trusted
 * cells.  An anywidget model (and any model that carries `_esm`/`_css`, the
 * anywidget convention) holds a JavaScript module that its front end imports
 * as the model is created: restoring it runs the notebook author's script in
 * the Jupyter page, with the user's session on the server's API.  Nothing in
 * this file touches the page, so the unit specs load it as is.
 */

import { isObject, JSONObject } from './common';

/** The key of the saved state inside `metadata.widgets` (what the manager restores). */
export const WIDGET_STATE_MIME = 'application/vnd.jupyter.widget-state+json';

/** Model modules whose front end runs code taken from the model's state. */
const CODE_MODULES = new Set(['anywidget']);

/** State keys that hold a module or style sheet the front end loads. */
const CODE_KEYS = ['_esm', '_css'];

/**
 * Whether one saved model (an entry of the state's `state`) carries code its
 * front end would run: an anywidget model, or any model whose state or
 * buffers hold `_esm`/`_css`.  An entry that is not an object cannot be
 * checked, so it counts as carrying code.
 */
export function carriesCode(entry: unknown): boolean {
  if (!isObject(entry)) {
    return true;
  }
  const state = isObject(entry.state) ? entry.state : {};
  const modules = [
    entry.model_module,
    state._model_module,
    state._view_module
  ];
  if (modules.some(m => typeof m === 'string' && CODE_MODULES.has(m))) {
    return true;
  }
  if (CODE_KEYS.some(key => key in state)) {
    return true;
  }
  const buffers = Array.isArray(entry.buffers) ? entry.buffers : [];
  return buffers.some(
    b =>
      isObject(b) &&
      Array.isArray(b.path) &&
      CODE_KEYS.includes(String(b.path[0]))
  );
}

/** `metadata.widgets` without the models that carry code, and the ids removed. */
export interface IWithoutCode {
  widgets: JSONObject;
  removed: string[];
}

/**
 * `widgets` (a notebook's `metadata.widgets`) without its saved models that
 * carry code; `null` when there is nothing to remove (no saved state, or
 * none of its models carries code), so the caller leaves the metadata as is.
 */
export function withoutCode(widgets: unknown): IWithoutCode | null {
  if (!isObject(widgets) || !isObject(widgets[WIDGET_STATE_MIME])) {
    return null;
  }
  const saved = widgets[WIDGET_STATE_MIME] as JSONObject;
  if (!isObject(saved.state)) {
    return null;
  }
  const kept: JSONObject = {};
  const removed: string[] = [];
  for (const [id, entry] of Object.entries(saved.state)) {
    if (carriesCode(entry)) {
      removed.push(id);
    } else {
      kept[id] = entry;
    }
  }
  if (!removed.length) {
    return null;
  }
  return {
    widgets: { ...widgets, [WIDGET_STATE_MIME]: { ...saved, state: kept } },
    removed
  };
}

/** What the trust check reads of a cell (a JupyterLab `ICellModel` fits). */
export interface ICellTrust {
  readonly type: string;
  readonly trusted: boolean;
  readonly sharedModel: { getSource(): string };
  readonly outputs?: { readonly length: number };
}

/**
 * Whether the notebook is trusted as Jupyter's notary decided when it was
 * read: the server marks every code cell trusted when the file's signature
 * is this user's, else none (markdown cells carry no mark).  So: every code
 * cell is trusted, and at least one of them has source or outputs.  The
 * last part matters because JupyterLab gives a notebook saved with no cells
 * one empty code cell that it marks trusted itself: such a notebook proves
 * nothing, and has no output where a saved widget could show.
 */
export function notebookTrusted(cells: Iterable<ICellTrust>): boolean {
  let substantive = false;
  for (const cell of cells) {
    if (cell.type !== 'code') {
      continue;
    }
    if (!cell.trusted) {
      return false;
    }
    if (cell.sharedModel.getSource() !== '' || (cell.outputs?.length ?? 0) > 0) {
      substantive = true;
    }
  }
  return substantive;
}
