/**
 * A flow's live area whose widget model is gone: what waits, and the line that continues it.
 *
 * A flow's live area (an output marked `mcp_notebook.display_id`, not `final`) is a widget view
 * of the kernel that ran the cell. After a page reload with a new kernel, or a kernel restart
 * followed by a reload, the widget manager has no model for it and its renderer shows
 * "Error displaying widget: model not found". The saved output's text/html or text/plain
 * cannot help: JupyterLab renders the widget-view mime type whenever the widget manager is
 * installed. So once that renderer has given up (its node holds only its error text), this
 * module hides it and shows our own words in its place: for each flow the notebook's metadata
 * keeps for that cell, its id, what it asks, and `%mcp resume ID`; otherwise that nothing of the
 * flow was saved. Built from text nodes only (a record's questions are server text; the id is
 * written as one word of a `%mcp` line by `lineWord`, as the kernel's `core.text.mcp_line` does),
 * the metadata's text each in a `<bdi>`, so bidi characters in it reorder nothing around it.
 */

import type { ICodeCellModel } from '@jupyterlab/cells';
import type { NotebookPanel } from '@jupyterlab/notebook';

import { isObject } from './common';
import { lineWord, METADATA_KEY, readFlows } from './flows';
import { outputMark } from './reports';

/** CSS class of the text shown in place of a live area whose widget model is gone. */
export const LOST_CLASS = 'mcp-notebook-lost';

/** The widget-view mime type of ipywidgets. */
const WIDGET_VIEW_MIME = 'application/vnd.jupyter.widget-view+json';

/** Longest question text shown (server text, shortened). */
const QUESTION_CHARS = 200;

/** What is read of a code cell's output area. */
type OutputWidgets = { widgets: ReadonlyArray<{ node: HTMLElement }> };

/** One flow the metadata keeps for a cell: its id and what it asks. */
export type Waiting = { id: string; asks: string[] };

/** The flows `metadata.mcp_notebook.flows` keeps for the cell `cellId`, with their questions. */
export function waitingIn(raw: unknown, cellId: string): Waiting[] {
  const found: Waiting[] = [];
  for (const [key, record] of Object.entries(readFlows(raw).flows)) {
    if (record.cell_id !== cellId) {
      continue;
    }
    const id = typeof record.id === 'string' && record.id ? record.id : key;
    const asks: string[] = [];
    if (isObject(record.pending)) {
      for (const request of Object.values(record.pending)) {
        const params = isObject(request) ? request.params : undefined;
        const message = isObject(params) ? params.message : undefined;
        if (typeof message === 'string' && message) {
          asks.push(
            message.length > QUESTION_CHARS
              ? message.slice(0, QUESTION_CHARS) + '…'
              : message
          );
        }
      }
    }
    found.push({ id, asks });
  }
  return found;
}

/**
 * One piece of a line shown in place of a lost live area: our own words, a `%mcp` line, or text
 * read from the notebook's metadata (a flow's id, a server's question: anyone's text, as a received
 * notebook's metadata is), which is shown in a `<bdi>` of its own so that bidirectional text and
 * control characters in it cannot reorder the words around it.
 */
export type Part = { text: string; kind: 'words' | 'code' | 'metadata' };

/** What shows in place of the lost live area, line by line (`lostNode` renders it). */
export function lostLines(waiting: Waiting[]): Part[][] {
  const words = (text: string): Part => ({ text, kind: 'words' });
  const metadata = (text: string): Part => ({ text, kind: 'metadata' });
  const code = (text: string): Part => ({ text, kind: 'code' });
  if (!waiting.length) {
    return [
      [
        words(
          "This flow's form was live in a kernel that is gone, and nothing of it is saved to continue. Run the cell again to start it afresh."
        )
      ]
    ];
  }
  const lines: Part[][] = [];
  for (const flow of waiting) {
    const asks: Part[] = [];
    flow.asks.forEach((ask, i) => asks.push(words(i ? ' · ' : ': '), metadata(ask)));
    lines.push([words('MCP flow '), metadata(flow.id), words(' waits for input'), ...asks]);
    lines.push([
      words('Its form was live in a kernel that is gone. To continue, run '),
      code(`%mcp resume ${lineWord(flow.id)}`),
      words(' (a new kernel needs '),
      code('%load_ext mcp_notebook'),
      words(' first).')
    ]);
  }
  return lines;
}

/** What shows in place of the lost live area: our words, the metadata's text isolated, as text nodes only. */
export function lostNode(waiting: Waiting[]): HTMLElement {
  const node = document.createElement('div');
  node.className = LOST_CLASS;
  node.setAttribute('role', 'status');
  for (const parts of lostLines(waiting)) {
    const div = document.createElement('div');
    for (const { text, kind } of parts) {
      if (kind === 'words') {
        div.appendChild(document.createTextNode(text));
        continue;
      }
      const el = document.createElement(kind === 'code' ? 'code' : 'bdi');
      if (kind === 'code') {
        el.dir = 'ltr'; // a %mcp line reads left to right, isolated from the words around it
      }
      el.textContent = text;
      div.appendChild(el);
    }
    node.appendChild(div);
  }
  return node;
}

/** Whether the widget renderer inside `node` gave up (its own error text, no view). */
function rendererGaveUp(node: HTMLElement): HTMLElement | null {
  const found = node.classList.contains('jupyter-widgets')
    ? [node]
    : Array.from(node.querySelectorAll<HTMLElement>('.jupyter-widgets'));
  for (const el of found) {
    if (
      el.childElementCount === 0 &&
      (el.textContent ?? '').startsWith('Error displaying widget')
    ) {
      return el;
    }
  }
  return null;
}

/** Put our words in place of every live area of this view whose widget model is gone. */
export function showLostLiveAreas(panel: NotebookPanel): number {
  if (panel.isDisposed || !panel.context.model) {
    return 0;
  }
  const gaveUp = Array.from(
    panel.content.node.querySelectorAll<HTMLElement>('.jupyter-widgets')
  ).some(el => rendererGaveUp(el) !== null);
  if (!gaveUp) {
    return 0; // the common case, checked on every change of the outputs: no output model is read
  }
  const metadata = panel.context.model.getMetadata(METADATA_KEY);
  let shown = 0;
  for (const cell of panel.content.widgets) {
    if (cell.model.type !== 'code') {
      continue;
    }
    const outputs = (cell.model as ICodeCellModel).outputs;
    // a code cell's output area: one widget per output, in the model's order
    const area = (cell as unknown as { outputArea?: OutputWidgets }).outputArea;
    if (!area) {
      continue;
    }
    for (let i = 0; i < outputs.length && i < area.widgets.length; i++) {
      const output = outputs.get(i).toJSON();
      const mark = outputMark(output);
      const data = isObject(output) ? output.data : undefined;
      if (!mark || mark.final || !isObject(data) || !(WIDGET_VIEW_MIME in data)) {
        continue;
      }
      const node = area.widgets[i].node;
      const failed = rendererGaveUp(node);
      const present = node.querySelector<HTMLElement>(`.${LOST_CLASS}`);
      if (!failed) {
        continue;
      }
      const fresh = lostNode(waitingIn(metadata, cell.model.id));
      if (present) {
        if (present.textContent !== fresh.textContent) {
          present.replaceWith(fresh); // the metadata changed (the flow ended, or moved on)
        }
        continue;
      }
      failed.style.display = 'none';
      failed.after(fresh);
      shown++;
    }
  }
  return shown;
}
