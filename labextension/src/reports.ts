/**
 * A flow's live area and report in its cell's outputs.
 *
 * A flow's live area is an output whose metadata carries
 * `mcp_notebook.display_id`; when the flow ends the kernel updates that
 * display (`update_display_data`), which only the page that ran the cell can
 * place (a display id is not saved), and also sends the report on the comm
 * (`comm.ts`).  The page writes it over the output carrying that display id
 * (or adds it to the cell `cell_id` when none does), unless the report is
 * already there.  The live area itself comes the same way when the kernel
 * makes it (`display`): added to the cell when no output carries its display
 * id (a page that reloaded before it was shown, or where Continue was clicked
 * after a reload).  Under real-time collaboration every page shares the
 * outputs, and two pages may write at once: the copies are the same, so the
 * first in the shared order is kept (a report before a live area) and the
 * others removed (every page removes the same ones); a page waits a moment
 * before adding a live area, since the page that ran the cell has usually
 * written it already.
 */

import type { ICodeCellModel } from '@jupyterlab/cells';
import type { NotebookPanel } from '@jupyterlab/notebook';

import { isObject, JSONObject } from './common';

/** Output metadata key: `{display_id}` on a flow's live area, `{display_id, final: true}` on its report. */
export const OUTPUT_KEY = 'mcp_notebook';

/** What the kernel's display ids look like (uuid4 hex). */
const DISPLAY_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** What `writeReport` did. */
export type ReportOutcome = 'written' | 'present' | 'no-cell' | 'invalid';

type Cells = NotebookPanel['context']['model']['cells'];

/** The mark of a flow's live area or report on one output, or null. */
export function outputMark(
  output: unknown
): { displayId: string; final: boolean } | null {
  if (!isObject(output) || !isObject(output.metadata)) {
    return null;
  }
  const mark = output.metadata[OUTPUT_KEY];
  if (!isObject(mark) || typeof mark.display_id !== 'string') {
    return null;
  }
  return { displayId: mark.display_id, final: mark.final === true };
}

function codeCells(cells: Cells): ICodeCellModel[] {
  const found: ICodeCellModel[] = [];
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.type === 'code') {
      found.push(cell as ICodeCellModel);
    }
  }
  return found;
}

function marks(cell: ICodeCellModel, displayId: string): number[][] {
  const live: number[] = [];
  const final: number[] = [];
  for (let i = 0; i < cell.outputs.length; i++) {
    const mark = outputMark(cell.outputs.get(i).toJSON());
    if (mark?.displayId === displayId) {
      (mark.final ? final : live).push(i);
    }
  }
  return [live, final];
}

/**
 * Whether `data` (the kernel's `report` or `display` message) carries a
 * well-formed output of that kind.  The output is the kernel's own
 * (`display_data`, its HTML escaped by the kernel); only its shape is checked.
 */
function validOutput(data: JSONObject, final: boolean): boolean {
  const displayId = data.display_id;
  const output = data.output;
  return (
    typeof displayId === 'string' &&
    DISPLAY_ID.test(displayId) &&
    isObject(output) &&
    output.output_type === 'display_data' &&
    isObject(output.data) &&
    outputMark(output)?.displayId === displayId &&
    outputMark(output)?.final === final
  );
}

/**
 * Add a flow's live area (`data`: the kernel's `display` message) to the cell
 * `cell_id` when no output of the notebook carries its display id; nothing
 * when one does (the page that ran the cell got it as a display).
 */
export function writeLive(cells: Cells, data: JSONObject): ReportOutcome {
  if (!validOutput(data, false)) {
    return 'invalid';
  }
  const displayId = data.display_id as string;
  const all = codeCells(cells);
  if (all.some(cell => marks(cell, displayId).some(list => list.length > 0))) {
    return 'present';
  }
  const cell = all.find(cell => cell.id === data.cell_id);
  if (!cell) {
    return 'no-cell';
  }
  cell.outputs.add(data.output as any);
  return 'written';
}

/**
 * Write a flow's settled report (`data`: the kernel's `report` message) into
 * the notebook: over the outputs that still show its live area, or added to
 * the cell `cell_id` when no output carries its display id and `add` (the
 * page that runs the flow, or that tab reloaded: a second tab that never
 * showed the flow adds nothing).  Nothing when the report is already there
 * (the page that ran the cell got it as a display update).
 */
export function writeReport(
  cells: Cells,
  data: JSONObject,
  add = true
): ReportOutcome {
  if (!validOutput(data, true)) {
    return 'invalid';
  }
  const displayId = data.display_id as string;
  const output = data.output as JSONObject;
  const all = codeCells(cells);
  let targets = all.filter(cell => {
    const [live, final] = marks(cell, displayId);
    return live.length > 0 || final.length > 0;
  });
  if (targets.length === 0) {
    if (!add) {
      return 'no-cell'; // not the page that runs the flow, and it never showed it: leave this copy alone
    }
    const cellId = data.cell_id;
    targets = all.filter(cell => typeof cellId === 'string' && cell.id === cellId);
    if (targets.length === 0) {
      return 'no-cell';
    }
    targets[0].outputs.add(output as any);
    return 'written';
  }
  let outcome: ReportOutcome = 'present';
  for (const cell of targets) {
    const [live, final] = marks(cell, displayId);
    if (final.length > 0) {
      continue;
    }
    for (const index of live) {
      cell.outputs.set(index, output as any);
    }
    outcome = 'written';
  }
  return outcome;
}

/**
 * Keep one output per display id in each cell: the first report, else the
 * first live area.  Two pages sharing the notebook (real-time collaboration)
 * may both have written one; every page sees the shared outputs in the same
 * order and removes the same others, so they agree.  Reads and removes by
 * the shared model's order, not the view's.
 */
export function dedupeReports(cells: Cells, displayId: string): number {
  let removed = 0;
  for (const cell of codeCells(cells)) {
    const shared = cell.sharedModel;
    const outputs = shared.getOutputs();
    const copies: number[] = [];
    let keep = -1;
    outputs.forEach((output, i) => {
      const mark = outputMark(output);
      if (mark?.displayId !== displayId) {
        return;
      }
      copies.push(i);
      if (keep < 0 || (mark.final && !outputMark(outputs[keep])?.final)) {
        keep = i;
      }
    });
    for (const index of copies.filter(i => i !== keep).reverse()) {
      shared.updateOutputs(index, index + 1, []);
      removed++;
    }
  }
  return removed;
}
