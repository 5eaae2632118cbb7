/**
 * mcp-notebook front end (JupyterLab 4.6 and Notebook 7).
 *
 * The kernel side of mcp-notebook keeps MCP flows that wait for input.  This
 * extension owns the notebook metadata key `mcp_notebook` and stores those
 * flows there, so they survive a kernel restart and travel with the .ipynb:
 *
 *     metadata.mcp_notebook = {"flows": {ID: RECORD, ...}}
 *
 * The kernel opens a comm (target `mcp_notebook`) and says hello; the
 * extension replies with the saved records, then stores and removes records
 * on request.  Cells that started a saved flow carry a visible marker.
 *
 * Protocol (all messages are JSON objects on the one comm):
 *   kernel -> front end                    front end -> kernel
 *   comm_open {op: "hello", v: 1}          {op: "restore", v: 1, reason: "hello", flows, path, page_url, [warnings]}
 *   {op: "save", record: {id, ...}}        {op: "ack", id}            (or op "error")
 *   {op: "delete", id}                     {op: "ack", id}
 *   {op: "delete", all: true}              {op: "ack", id: null, all: true}
 *   {op: "hello", v: 1} (again)            {op: "restore", ...}
 *                                          {op: "path", path}        (after a rename)
 *                                          {op: "restore", reason: "reconnect", ...}
 *                                            (unsolicited, when a reloaded page adopts
 *                                             a comm the kernel already had open)
 *   {op: "oauth_wait", state}              {op: "ack", id: null, state}
 *   {op: "oauth_cancel", state}            {op: "ack", id: null, state}
 *                                          {op: "oauth", state, code, iss, error, error_description}
 *                                            (once, when the OAuth callback for an awaited
 *                                             state arrived; strings or null)
 *   {op: "report", cell_id, display_id,    {op: "shown", display_id}
 *    output}                                 (the cell now holds that report)
 *   {op: "display", cell_id, display_id,   {op: "shown", display_id}
 *    output}                                 (the cell now holds that live area)
 *   on a comm the page opens:              comm_open {op: "where", v: 1}
 *   {op: "here", comm_id} (then closed)      (the kernel's own comm, to adopt: a running cell
 *                                             holds comm_info_request back until it ends)
 * A `req` field in a kernel message is echoed in the reply.
 *
 * Reports: a flow's live area is an output whose metadata carries
 * `mcp_notebook.display_id`; when the flow ends the kernel updates that
 * display (`update_display_data`), which only the page that ran the cell can
 * place (a display id is not saved), and also sends the report here.  The
 * page writes it over the output carrying that display id (or adds it to the
 * cell `cell_id` when none does), unless the report is already there.  The
 * live area itself comes the same way when the kernel makes it (`display`):
 * added to the cell when no output carries its display id (a page that
 * reloaded before it was shown, or where Continue was clicked after a reload).
 * Under real-time collaboration every page shares the outputs, and two pages
 * may write at once: the copies are the same, so the first in the shared order
 * is kept (a report before a live area) and the others removed (every page
 * removes the same ones); a page waits a moment before adding a live area,
 * since the page that ran the cell has usually written it already.
 *
 * MCP Apps (`apps.ts`): outputs of MIME type
 * `application/vnd.mcp-notebook.app+json` are rendered by this extension;
 * the renderer sends `app_open`, `app_activate`, `app_request` and
 * `app_notify` on the notebook's comm, and every `app_*` message from the
 * kernel (`app_resource`, `app_error`, `app_reply`, `app_reload`) goes to it.
 *
 * OAuth sign-in (`oauth.ts`): every restore carries `page_url`, the absolute
 * base URL of the Jupyter server as this browser sees it (ending in "/"); the
 * kernel's redirect URI is `page_url + "mcp-notebook/oauth/callback"`, served
 * by the package's Jupyter Server extension.  The callback page posts what it
 * got on `BroadcastChannel("mcp-notebook-oauth")`; this page forwards it to
 * the one comm that awaits that state, and polls
 * `page_url + "mcp-notebook/oauth/result?state=..."` every 2 s (up to 15 min)
 * in case the broadcast is lost.
 *
 * Forms and panels of a flow live in widgets of the kernel that showed them;
 * their root carries the class `mcp-notebook-form`.  When that kernel
 * restarts, stops or is replaced, nothing can answer them any more: the
 * extension marks each one stale (a banner saying so, its controls disabled).
 * Saved flows stay in the metadata and continue with `%mcp resume ID`.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import type { ICodeCellModel } from '@jupyterlab/cells';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { Kernel, KernelMessage } from '@jupyterlab/services';
import { Widget } from '@lumino/widgets';

import { APP_CLASS, APP_MIME, APP_RANK, AppHub, IAppHost } from './apps';
import { OAuthRelay, pageUrl } from './oauth';

/** Notebook metadata key owned by this extension. */
export const METADATA_KEY = 'mcp_notebook';

/** Comm target the kernel opens. */
export const COMM_TARGET = 'mcp_notebook';

/** Protocol version. */
export const PROTOCOL_VERSION = 1;

/** CSS class put on cells that started a saved flow. */
export const WAITING_CLASS = 'mcp-notebook-waiting';

/** CSS class of the badge inside such a cell. */
export const BADGE_CLASS = 'mcp-notebook-badge';

/** CSS class the kernel puts on the root widget of a form or panel. */
export const FORM_CLASS = 'mcp-notebook-form';

/** CSS class added to a form whose kernel is gone. */
export const STALE_CLASS = 'mcp-notebook-stale';

/** CSS class of the banner inside such a form. */
export const STALE_BANNER_CLASS = 'mcp-notebook-stale-banner';

/** Output metadata key: `{display_id}` on a flow's live area, `{display_id, final: true}` on its report. */
export const OUTPUT_KEY = 'mcp_notebook';

/** What the kernel's display ids look like (uuid4 hex). */
const DISPLAY_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** What happened to the kernel that showed a form. */
export type KernelGone = 'restarted' | 'stopped' | 'replaced';

type JSONObject = { [key: string]: unknown };

/** A saved flow record.  Only `id` and `cell_id` are read here. */
export type FlowRecord = JSONObject;

function isObject(value: unknown): value is JSONObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return 'an array';
  }
  return `a ${typeof value}`;
}

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

/**
 * Everything the extension needs from a notebook document.  The context is
 * shared by all views of one notebook, so it is the unit we track.
 */
type Context = NotebookPanel['context'];

/** Per-document state. */
interface IDocState {
  context: Context;
  /** Open comms to kernels of this document (to send path updates). */
  comms: Set<Kernel.IComm>;
}

const docStates = new WeakMap<Context, IDocState>();

function docState(context: Context): IDocState {
  let state = docStates.get(context);
  if (!state) {
    const created: IDocState = { context, comms: new Set() };
    docStates.set(context, created);
    context.pathChanged.connect(() => {
      for (const comm of created.comms) {
        safeSend(comm, { op: 'path', path: context.localPath });
      }
    });
    state = created;
  }
  return state;
}

function safeSend(comm: Kernel.IComm, data: JSONObject): void {
  try {
    if (!comm.isDisposed) {
      comm.send(data as any);
    }
  } catch (reason) {
    console.warn('mcp-notebook: could not reply to the kernel', reason);
  }
}

/** Write `flows` back, or remove the key when there is none left. */
function writeFlows(
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

/** Handle one message from the kernel; return the reply. */
export function handleKernelMessage(
  context: Context,
  data: unknown
): JSONObject {
  const reply = (body: JSONObject): JSONObject => {
    if (isObject(data) && data.req !== undefined) {
      body.req = data.req;
    }
    return body;
  };
  if (!isObject(data)) {
    return { op: 'error', message: `message is ${describe(data)}, not an object` };
  }
  const op = data.op;
  if (context.isDisposed || !context.model) {
    return reply({ op: 'error', for: op ?? null, message: 'notebook is closed' });
  }
  const model = context.model;
  switch (op) {
    case 'hello': {
      const { flows, warnings } = readFlows(model.getMetadata(METADATA_KEY));
      const body: JSONObject = {
        op: 'restore',
        v: PROTOCOL_VERSION,
        flows,
        path: context.localPath
      };
      if (warnings.length) {
        body.warnings = warnings;
      }
      return reply(body);
    }
    case 'save': {
      const record = data.record;
      if (!isObject(record)) {
        return reply({
          op: 'error',
          for: 'save',
          id: null,
          message: `record is ${describe(record)}, not an object`
        });
      }
      const id = record.id;
      if (typeof id !== 'string' || id === '') {
        return reply({
          op: 'error',
          for: 'save',
          id: null,
          message: 'record has no string "id"'
        });
      }
      const { flows, warnings } = readFlows(model.getMetadata(METADATA_KEY));
      flows[id] = record;
      writeFlows(context, flows);
      const body: JSONObject = { op: 'ack', id };
      if (warnings.length) {
        body.warnings = warnings.map(w => w.replace(/; ignored$/, '; dropped'));
      }
      return reply(body);
    }
    case 'delete': {
      const { flows, warnings } = readFlows(model.getMetadata(METADATA_KEY));
      let body: JSONObject;
      if (data.all === true) {
        writeFlows(context, {});
        body = { op: 'ack', id: null, all: true };
      } else {
        const id = data.id;
        if (typeof id !== 'string') {
          return reply({
            op: 'error',
            for: 'delete',
            id: null,
            message: 'delete needs a string "id" or "all": true'
          });
        }
        delete flows[id];
        writeFlows(context, flows);
        body = { op: 'ack', id };
        if (warnings.length) {
          body.warnings = warnings.map(w =>
            w.replace(/; ignored$/, '; dropped')
          );
        }
      }
      return reply(body);
    }
    default:
      return reply({
        op: 'error',
        for: typeof op === 'string' ? op : null,
        message: `unknown op ${JSON.stringify(op ?? null)}`
      });
  }
}

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

/** How long a page under real-time collaboration waits before adding a live area it does not see. */
const SHARED_GRACE_MS = 1500;

/** What `writeReport` did. */
export type ReportOutcome = 'written' | 'present' | 'no-cell' | 'invalid';

type Cells = NotebookPanel['context']['model']['cells'];

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
 * Write a flow's settled report (`data`: the kernel's `report` message) into
 * the notebook: over the outputs that still show its live area, or added to
 * the cell `cell_id` when no output carries its display id.  Nothing when the
 * report is already there (the page that ran the cell got it as a display
 * update).  The output is the kernel's own (`display_data`, its HTML escaped
 * by the kernel); only its shape is checked here.
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

export function writeReport(cells: Cells, data: JSONObject): ReportOutcome {
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

/**
 * After this long without an answer to `comm_info_request` (a cell is
 * running: ipykernel answers it only after the cell), ask the kernel with a
 * comm of our own, which it handles while the cell awaits.
 */
const PROBE_AFTER_MS = 2000;

/** Kernel connections that already have our comm target. */
const hookedKernels = new WeakSet<Kernel.IKernelConnection>();

/**
 * Register the comm target on one kernel connection, once, and adopt the
 * comms the kernel already has open (after a page reload).
 *
 * `SessionContext.restartKernel()` emits `kernelChanged` with the same
 * connection as old and new value, and registered targets survive a restart,
 * so a WeakSet keeps us from registering twice.
 */
function hookKernel(
  kernel: Kernel.IKernelConnection | null | undefined,
  context: Context,
  relay: OAuthRelay,
  hub: AppHub
): void {
  if (!kernel || kernel.isDisposed || hookedKernels.has(kernel)) {
    return;
  }
  if (!kernel.handleComms) {
    // Another connection of this page handles the comms of that kernel.
    return;
  }
  hookedKernels.add(kernel);
  const state = docState(context);
  const mine = new Set<Kernel.IComm>();
  // Comm ids adopted from the kernel (they get a "reconnect" restore).
  const adopted = new Set<string>();

  const attach = (comm: Kernel.IComm): void => {
    state.comms.add(comm);
    mine.add(comm);
    comm.onMsg = (m: KernelMessage.ICommMsgMsg) => {
      dispatch(comm, m.content.data);
    };
    comm.onClose = () => {
      state.comms.delete(comm);
      mine.delete(comm);
      relay.forgetComm(comm);
      hub.commClosed(comm);
    };
    // App outputs that waited for a connection may ask for their App now.
    hub.commOpened(context);
  };

  // OAuth waits need no document: answered at once, so a callback that comes
  // back quickly is not missed.  Everything else goes through `respond`.
  const dispatch = (comm: Kernel.IComm, data: unknown): void => {
    if (
      isObject(data) &&
      (data.op === 'oauth_wait' || data.op === 'oauth_cancel')
    ) {
      safeSend(comm, relay.handle(comm, kernel.serverSettings, data));
    } else if (
      isObject(data) &&
      (data.op === 'report' || data.op === 'display')
    ) {
      report(comm, data);
    } else if (
      isObject(data) &&
      typeof data.op === 'string' &&
      data.op.startsWith('app_')
    ) {
      // Replies to the App outputs' requests, and reloads: never answered.
      hub.handle(context, comm, data);
    } else {
      respond(comm, data);
    }
  };

  // Replies wait for the document to be loaded; they keep their order
  // because every one awaits the same promise.  Never return the promise to
  // the kernel connection: that would hold up its whole message queue.
  const respond = (
    comm: Kernel.IComm,
    data: unknown,
    reason: 'hello' | 'reconnect' = 'hello'
  ): void => {
    context.ready
      .then(() => {
        const reply = handleKernelMessage(context, data);
        if (reply.op === 'restore') {
          reply.reason = reason;
          reply.page_url = pageUrl(kernel.serverSettings);
        }
        safeSend(comm, reply);
      })
      .catch(reason =>
        console.warn('mcp-notebook: could not handle a message', reason)
      );
  };

  // A flow's report: written into this page's notebook model when the page
  // does not have it (it reloaded, or joined after the cell ran), then any
  // copy another page wrote at the same moment is removed, now and a little
  // later (the other page's write may still be on its way).
  const report = (comm: Kernel.IComm, data: JSONObject): void => {
    const live = data.op === 'display';
    context.ready
      .then(() =>
        live && context.model?.collaborative
          ? new Promise(resolve => setTimeout(resolve, SHARED_GRACE_MS))
          : undefined
      )
      .then(() => {
        if (context.isDisposed || !context.model) {
          return;
        }
        const cells = context.model.cells;
        const outcome = live ? writeLive(cells, data) : writeReport(cells, data);
        if (outcome === 'invalid') {
          console.warn(
            `mcp-notebook: a ${live ? 'live area' : 'report'} from the kernel was not understood`
          );
          return;
        }
        if (outcome === 'no-cell') {
          return;
        }
        const displayId = data.display_id as string;
        const dedupe = () => {
          if (!context.isDisposed && context.model) {
            const removed = dedupeReports(context.model.cells, displayId);
            if (removed) {
              console.info(
                `mcp-notebook: removed ${removed} copy(ies) of a flow's output that another page wrote at the same time`
              );
            }
          }
        };
        dedupe();
        for (const ms of [500, 2000, 5000]) {
          setTimeout(dedupe, ms);
        }
        safeSend(comm, { op: 'shown', display_id: displayId });
      })
      .catch(reason =>
        console.warn('mcp-notebook: could not write a report', reason)
      );
  };

  kernel.registerCommTarget(
    COMM_TARGET,
    (comm: Kernel.IComm, msg: KernelMessage.ICommOpenMsg) => {
      attach(comm);
      // The open message carries the hello (or any other request).  If this
      // comm was adopted a moment ago it already got its restore.
      const data = msg.content.data as JSONObject;
      if (isObject(data) && data.op === 'hello' && adopted.has(comm.commId)) {
        return;
      }
      dispatch(comm, data);
    }
  );

  // After a page reload the kernel still holds the comm that the previous
  // page answered; this page would drop its messages ("Comm not found").
  // Adopt such comms and send them an unsolicited restore.
  const adopt = (commId: string): void => {
    if (kernel.isDisposed || kernel.hasComm(commId) || adopted.has(commId)) {
      return;
    }
    adopted.add(commId);
    const comm = kernel.createComm(COMM_TARGET, commId);
    attach(comm);
    respond(comm, { op: 'hello', v: PROTOCOL_VERSION }, 'reconnect');
  };
  let listed = false;
  void kernel.info
    .then(() =>
      kernel.isDisposed
        ? undefined
        : kernel.requestCommInfo({ target_name: COMM_TARGET })
    )
    .then(reply => {
      listed = true;
      if (!reply || reply.content.status !== 'ok' || kernel.isDisposed) {
        return;
      }
      for (const [commId, info] of Object.entries(reply.content.comms)) {
        if (info.target_name === COMM_TARGET) {
          adopt(commId);
        }
      }
    })
    .catch(reason =>
      console.warn('mcp-notebook: could not look for open comms', reason)
    );
  // A running cell (a call awaiting its flow) holds that request back until
  // it ends, and the flow may wait for this very page; a comm_open is handled
  // meanwhile, so ask the kernel where its comm is.  A kernel without
  // mcp-notebook closes the asking comm.
  setTimeout(() => {
    if (listed || kernel.isDisposed || !kernel.handleComms) {
      return;
    }
    try {
      const probe = kernel.createComm(COMM_TARGET);
      probe.onMsg = (m: KernelMessage.ICommMsgMsg) => {
        const data = m.content.data;
        if (
          isObject(data) &&
          data.op === 'here' &&
          typeof data.comm_id === 'string'
        ) {
          adopt(data.comm_id);
        }
      };
      probe.open({ op: 'where', v: PROTOCOL_VERSION });
    } catch (reason) {
      console.warn('mcp-notebook: could not ask the kernel for its comm', reason);
    }
  }, PROBE_AFTER_MS);

  kernel.disposed.connect(() => {
    for (const comm of mine) {
      state.comms.delete(comm);
      relay.forgetComm(comm);
      hub.commClosed(comm);
    }
    mine.clear();
  });
}

/** Map cell id -> ids of the saved flows it started. */
function waitingCells(raw: unknown): Map<string, string[]> {
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
 * `text` as one word of a `%mcp` line, as the kernel's `line_expand.line_word` writes it: a saved
 * flow's id comes from the notebook's metadata, which a received notebook wrote, and the line's
 * `{expr}` expansion runs even inside quotes, so braces are doubled, then the word is quoted
 * (`shlex.quote`) when the magic's split, comment stripping or expansion would change it.
 */
function lineWord(text: string): string {
  const doubled = text.replace(/\{/g, '{{').replace(/\}/g, '}}');
  if (doubled && !/[\s'"\\#{}]/.test(doubled)) {
    return doubled;
  }
  return "'" + doubled.replace(/'/g, `'"'"'`) + "'";
}

function badgeText(ids: string[]): string {
  return ids
    .map(id => `MCP flow waiting for input — run %mcp resume ${lineWord(id)}`)
    .join('\n');
}

/** Put or remove the marker on every cell of one notebook view. */
function updateMarkers(panel: NotebookPanel): void {
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
function markPanelStale(panel: NotebookPanel, why: KernelGone): void {
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

/** Set up one notebook view (JupyterLab or Notebook 7). */
function setupPanel(
  panel: NotebookPanel,
  seen: WeakSet<NotebookPanel>,
  relay: OAuthRelay,
  hub: AppHub
): void {
  if (seen.has(panel)) {
    return;
  }
  seen.add(panel);
  const context = panel.context;
  const sessionContext = panel.sessionContext;
  // Each notebook clones the app's registry when it is created; one created
  // before this plugin activated would lack the App renderer.
  const rendermime = panel.content.rendermime;
  if (!rendermime.getFactory(APP_MIME)) {
    rendermime.addFactory(hub.factory(), APP_RANK);
  }

  sessionContext.kernelChanged.connect((_, args) => {
    hookKernel(args.newValue, context, relay, hub);
    // restartKernel() emits this with the same connection as old and new
    // value; a kernel picked by "Change Kernel" or a shutdown differs.
    if (args.oldValue) {
      const why: KernelGone =
        args.newValue === args.oldValue
          ? 'restarted'
          : args.newValue
            ? 'replaced'
            : 'stopped';
      hub.kernelGone(context);
      markPanelStale(panel, why);
    }
  });
  // A restart by anyone (this page, another page, the kernel dying and the
  // server restarting it) passes through one of these states.  A dropped
  // connection does not: the kernel and its forms may still be alive.
  sessionContext.statusChanged.connect((_, status) => {
    if (status === 'restarting' || status === 'autorestarting') {
      hub.kernelGone(context);
      markPanelStale(panel, 'restarted');
    } else if (status === 'dead') {
      hub.kernelGone(context);
      markPanelStale(panel, 'stopped');
    }
  });
  hookKernel(sessionContext.session?.kernel, context, relay, hub);
  void sessionContext.ready.then(() =>
    hookKernel(sessionContext.session?.kernel, context, relay, hub)
  );

  let scheduled = false;
  const schedule = () => {
    if (scheduled) {
      return;
    }
    scheduled = true;
    requestAnimationFrame(() => {
      scheduled = false;
      updateMarkers(panel);
    });
  };
  void context.ready.then(() => {
    if (panel.isDisposed) {
      return;
    }
    const model = context.model;
    updateMarkers(panel);
    const onMetadata = (_: unknown, change: { key: string }) => {
      if (change.key === METADATA_KEY) {
        schedule();
      }
    };
    model.metadataChanged.connect(onMetadata);
    // New, moved or pasted cells get new widgets.
    model.cells.changed.connect(schedule);
    panel.disposed.connect(() => {
      model.metadataChanged.disconnect(onMetadata);
      model.cells.changed.disconnect(schedule);
    });
  });
}

/** The newest open comm of a notebook document, or null. */
function latestComm(context: Context): Kernel.IComm | null {
  let found: Kernel.IComm | null = null;
  for (const comm of docState(context).comms) {
    if (!comm.isDisposed) {
      found = comm;
    }
  }
  return found;
}

/**
 * The notebook of a rendered App output: the NotebookPanel among its
 * parents, else the tracked panel whose DOM holds it.
 */
function appHostLocator(tracker: INotebookTracker) {
  return (widget: Widget): IAppHost | null => {
    let panel: NotebookPanel | null = null;
    for (let w: Widget | null = widget.parent; w; w = w.parent) {
      if (w instanceof NotebookPanel) {
        panel = w;
        break;
      }
    }
    panel ??= tracker.find(p => p.node.contains(widget.node)) ?? null;
    if (!panel || panel.isDisposed) {
      return null;
    }
    const context = panel.context;
    return { key: context, comm: () => latestComm(context) };
  };
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'mcp-notebook:plugin',
  description:
    'Keeps MCP flows that wait for input in the notebook metadata, marks their cells, relays OAuth sign-ins to the kernel, and renders MCP Apps in outputs.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [IRenderMimeRegistry],
  activate: (
    _app: JupyterFrontEnd,
    tracker: INotebookTracker,
    rendermime: IRenderMimeRegistry | null
  ) => {
    const seen = new WeakSet<NotebookPanel>();
    const relay = new OAuthRelay(safeSend);
    const hub = new AppHub(appHostLocator(tracker));
    // Notebooks opened from now on clone this registry.
    rendermime?.addFactory(hub.factory(), APP_RANK);
    tracker.widgetAdded.connect((_, panel) =>
      setupPanel(panel, seen, relay, hub)
    );
    tracker.forEach(panel => setupPanel(panel, seen, relay, hub));
  }
};

export default plugin;
