/**
 * The flows metadata: MCP flows that wait for input, kept in the notebook.
 *
 * This extension owns the notebook metadata key `mcp_notebook` and stores
 * the kernel's records there, so they survive a kernel restart and travel
 * with the .ipynb:
 *
 *     metadata.mcp_notebook = {"flows": {ID: RECORD, ...}}
 *
 * Each record is written as the kernel sends it; only `id` and `cell_id` are
 * read here.  When no flows are left, the key is removed.  Cells that started
 * a saved flow carry a visible marker (a class, a `data-mcp-flows` attribute
 * and a badge saying how to resume it).
 */

import type { NotebookPanel } from '@jupyterlab/notebook';

import { Context, describe, isObject, JSONObject } from './common';

/** Notebook metadata key owned by this extension. */
export const METADATA_KEY = 'mcp_notebook';

/** CSS class put on cells that started a saved flow. */
export const WAITING_CLASS = 'mcp-notebook-waiting';

/** CSS class of the badge inside such a cell. */
export const BADGE_CLASS = 'mcp-notebook-badge';

/** A saved flow record.  Only `id` and `cell_id` are read here. */
export type FlowRecord = JSONObject;

/**
 * Read `metadata.mcp_notebook.flows`, keeping only the valid records.
 *
 * Never throws.  `warnings` says, in plain words, what was ignored.
 */
export function readFlows(raw: unknown): {
  flows: { [id: string]: FlowRecord };
  warnings: string[];
} {
  const flows: { [id: string]: FlowRecord } = {};
  const warnings: string[] = [];
  if (raw === undefined) {
    return { flows, warnings };
  }
  if (!isObject(raw)) {
    warnings.push(
      `notebook metadata "${METADATA_KEY}" is ${describe(raw)}, not an object; ignored`
    );
    return { flows, warnings };
  }
  const rawFlows = raw.flows;
  if (rawFlows === undefined) {
    return { flows, warnings };
  }
  if (!isObject(rawFlows)) {
    warnings.push(
      `notebook metadata "${METADATA_KEY}.flows" is ${describe(rawFlows)}, not an object; ignored`
    );
    return { flows, warnings };
  }
  for (const [id, record] of Object.entries(rawFlows)) {
    if (!isObject(record)) {
      warnings.push(
        `saved flow "${id}" is ${describe(record)}, not an object; ignored`
      );
      continue;
    }
    flows[id] = record;
  }
  return { flows, warnings };
}

/** Write `flows` back, or remove the key when there is none left. */
export function writeFlows(
  context: Context,
  flows: { [id: string]: FlowRecord }
): void {
  const model = context.model;
  if (Object.keys(flows).length === 0) {
    if (model.getMetadata(METADATA_KEY) !== undefined) {
      model.deleteMetadata(METADATA_KEY);
    }
    return;
  }
  model.setMetadata(METADATA_KEY, { flows });
}

/** Map cell id -> ids of the saved flows it started. */
export function waitingCells(raw: unknown): Map<string, string[]> {
  const byCell = new Map<string, string[]>();
  const { flows } = readFlows(raw);
  for (const [id, record] of Object.entries(flows)) {
    const cellId = record.cell_id;
    if (typeof cellId !== 'string' || !cellId) {
      continue;
    }
    const list = byCell.get(cellId) ?? [];
    list.push(typeof record.id === 'string' && record.id ? record.id : id);
    byCell.set(cellId, list);
  }
  return byCell;
}

/**
 * `text` as one word of a `%mcp` line, as the kernel's `core.text.mcp_line` writes it: a saved
 * flow's id comes from the notebook's metadata, which a received notebook wrote. The word is put in
 * single quotes (as `shlex.quote` does) when the magic's split, comment stripping, `{expr}` expansion
 * or IPython's trailing `?` would change it: inside `'...'` the line expands nothing. Text with a control, format or line/paragraph separator character cannot be
 * written (IPython splits a cell at U+2028 even inside quotes): it is written as `…`. So is a word
 * starting with `-`: the subcommand's parser reads it as a flag whatever its quotes (an entry whose
 * id is `--trust=sha256:…` made `%mcp resume ID` consent to another record). Every word written here
 * is a value (a flow id), never one of our flags.
 */
export function lineWord(text: string): string {
  if (
    text.startsWith('-') ||
    /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]|[^\P{Zs} ]/u.test(text)
  ) {
    return '…';
  }
  // inside '...' a %mcp line expands nothing, so a brace is data there (core.text.line_word)
  if (text && !/[\s'"\\#{}?]/.test(text)) {
    return text;
  }
  return "'" + text.replace(/'/g, `'"'"'`) + "'";
}

function badgeText(ids: string[]): string {
  return ids
    .map(id => `MCP flow waiting for input — run %mcp resume ${lineWord(id)}`)
    .join('\n');
}

/** Put or remove the marker on every cell of one notebook view. */
export function updateMarkers(panel: NotebookPanel): void {
  if (panel.isDisposed || !panel.context.model) {
    return;
  }
  const byCell = waitingCells(panel.context.model.getMetadata(METADATA_KEY));
  for (const cell of panel.content.widgets) {
    const node = cell.node;
    const ids = byCell.get(cell.model.id);
    let badge = node.querySelector(
      `:scope > .${BADGE_CLASS}`
    ) as HTMLElement | null;
    if (!ids) {
      if (cell.hasClass(WAITING_CLASS)) {
        cell.removeClass(WAITING_CLASS);
      }
      delete node.dataset.mcpFlows;
      badge?.remove();
      continue;
    }
    cell.addClass(WAITING_CLASS);
    node.dataset.mcpFlows = ids.join(' ');
    if (!badge) {
      badge = document.createElement('div');
      badge.className = BADGE_CLASS;
      node.insertBefore(badge, node.firstChild);
    }
    const text = badgeText(ids);
    if (badge.textContent !== text) {
      badge.textContent = text;
      badge.title = text;
    }
  }
}
