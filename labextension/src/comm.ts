/**
 * The comm protocol (target `mcp_notebook`, version 1) between the kernel
 * side of mcp-notebook and this page.
 *
 * The kernel opens a comm and says hello; the extension replies with the
 * saved records (`flows.ts`), then stores and removes records on request.
 *
 * Protocol (all messages are JSON objects on the one comm):
 *   kernel -> front end                    front end -> kernel
 *   comm_open {op: "hello", v: 1}          {op: "restore", v: 1, reason: "hello", flows, path, page_url,
 *                                           page, client, [warnings]}  (page: this tab's id, kept across
 *                                           reloads; client: its kernel connection's client id)
 *   {op: "save", record: {id, ...},        {op: "ack", id, written}   (or op "error"; written: false
 *    [writer: {client, page}]}                                          from a page not addressed)
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
 *    output, [writer]}                       (the cell now holds that report; a page not
 *                                             addressed only replaces a live area it has)
 *   {op: "display", cell_id, display_id,   {op: "shown", display_id}
 *    output, [writer]}                       (the cell now holds that live area; only the
 *                                             page addressed by writer adds it)
 *   on a comm the page opens:              comm_open {op: "where", v: 1}
 *   {op: "here", comm_id} (then closed)      (the kernel's own comm, to adopt: a running cell
 *                                             holds comm_info_request back until it ends)
 * A `req` field in a kernel message is echoed in the reply.
 *
 * One writer per record: a save names the page that ran (or resumed) its flow's
 * cell; only that page writes it into its notebook model, so a shared notebook
 * (jupyter-collaboration) gets it once and a second tab that never showed the
 * flow stays clean.  Every page drops a deleted record it holds.
 *
 * Reports and live areas are written into the cells by `reports.ts`.
 *
 * MCP Apps (`apps/`): the renderer sends `app_open`, `app_activate`,
 * `app_request` and `app_notify` on the notebook's newest comm
 * (`latestComm`), and every `app_*` message from the kernel
 * (`app_resource`, `app_error`, `app_reply`, `app_reload`) goes to the
 * `AppHub`.
 *
 * OAuth sign-in (`oauth.ts`): every restore carries `page_url`, the absolute
 * base URL of the Jupyter server as this browser sees it (ending in "/"); the
 * kernel's redirect URI is `page_url + "mcp-notebook/oauth/callback"`, served
 * by the package's Jupyter Server extension.  The callback page posts what it
 * got on `BroadcastChannel("mcp-notebook-oauth")`; this page forwards it to
 * the one comm that awaits that state, and polls
 * `page_url + "mcp-notebook/oauth/result?state=..."` every 2 s (up to 15 min)
 * in case the broadcast is lost.
 */

import { Kernel, KernelMessage } from '@jupyterlab/services';

import type { AppHub } from './apps/hub';
import { Context, describe, isObject, JSONObject } from './common';
import { reasonText, showFailure } from './failures';
import { addressedHere, ISelf, pageId } from './writer';
import { METADATA_KEY, readFlows, writeFlows } from './flows';
import { OAuthRelay, pageUrl } from './oauth';
import { dedupeReports, writeLive, writeReport } from './reports';

/** Comm target the kernel opens. */
export const COMM_TARGET = 'mcp_notebook';

/** Protocol version. */
export const PROTOCOL_VERSION = 1;

/** How long a page under real-time collaboration waits before adding a live area it does not see. */
const SHARED_GRACE_MS = 1500;

/**
 * After this long without an answer to `comm_info_request` (a cell is
 * running: ipykernel answers it only after the cell), ask the kernel with a
 * comm of our own, which it handles while the cell awaits.
 */
const PROBE_AFTER_MS = 2000;

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

/** Send on a comm unless it is closed; a failure is logged, never thrown. */
export function safeSend(comm: Kernel.IComm, data: JSONObject): void {
  try {
    if (!comm.isDisposed) {
      comm.send(data as any);
    }
  } catch (reason) {
    console.warn('mcp-notebook: could not reply to the kernel', reason);
  }
}

/** The newest open comm of a notebook document, or null. */
export function latestComm(context: Context): Kernel.IComm | null {
  let found: Kernel.IComm | null = null;
  for (const comm of docState(context).comms) {
    if (!comm.isDisposed) {
      found = comm;
    }
  }
  return found;
}

/** Handle one message from the kernel; return the reply. */
export function handleKernelMessage(
  context: Context,
  data: unknown,
  self?: ISelf
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
      if (self) {
        body.page = self.page;
        body.client = self.client;
      }
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
      if (!addressedHere(data.writer, self)) {
        // another page shows this flow and writes it: this copy stays as it is (not dirty)
        return reply({ op: 'ack', id, written: false });
      }
      const { flows, warnings } = readFlows(model.getMetadata(METADATA_KEY));
      flows[id] = record;
      writeFlows(context, flows);
      const body: JSONObject = { op: 'ack', id, written: true };
      if (warnings.length) {
        body.warnings = warnings.map(w => w.replace(/; ignored$/, '; dropped'));
      }
      return reply(body);
    }
    case 'delete': {
      const { flows, warnings } = readFlows(model.getMetadata(METADATA_KEY));
      let body: JSONObject;
      if (data.all === true) {
        if (Object.keys(flows).length) {
          writeFlows(context, {});
        }
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
        if (id in flows) {
          // only a page holding the record writes: the others stay as they are (not dirty)
          delete flows[id];
          writeFlows(context, flows);
        }
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

/** Tell the user the notebook did not take a save or delete of a flow (once per page). */
function flowMetadataFailed(data: unknown, reason: unknown): void {
  const op = isObject(data) ? data.op : undefined;
  if (op === 'save') {
    showFailure(
      'flow-metadata',
      'MCP flow not saved in the notebook',
      `The notebook refused to store an MCP flow that waits for input: ${reasonText(reason)}. ` +
        'The flow still runs in this kernel, but it cannot be resumed from this notebook after a kernel restart.'
    );
  } else if (op === 'delete') {
    showFailure(
      'flow-metadata',
      'MCP flow not removed from the notebook',
      `The notebook refused to remove a finished MCP flow from its metadata: ${reasonText(reason)}. ` +
        'Its cell may still say that it waits for input.'
    );
  }
}

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
export function hookKernel(
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
        const reply = handleKernelMessage(context, data, {
          page: pageId(),
          client: kernel.clientId
        });
        if (reply.op === 'restore') {
          reply.reason = reason;
          reply.page_url = pageUrl(kernel.serverSettings);
        }
        safeSend(comm, reply);
      })
      .catch(reason => {
        console.warn('mcp-notebook: could not handle a message', reason);
        flowMetadataFailed(data, reason);
      });
  };

  // A flow's report: written into this page's notebook model when the page
  // does not have it (it reloaded, or joined after the cell ran), then any
  // copy another page wrote at the same moment is removed, now and a little
  // later (the other page's write may still be on its way).
  const report = (comm: Kernel.IComm, data: JSONObject): void => {
    const live = data.op === 'display';
    if (live && !addressedHere(data.writer, { page: pageId(), client: kernel.clientId })) {
      return; // a live area is added by the page that runs the flow (or that tab reloaded), not by a second tab
    }
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
        const outcome = live
          ? writeLive(cells, data)
          : writeReport(cells, data, addressedHere(data.writer, { page: pageId(), client: kernel.clientId }));
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
      .catch(reason => {
        console.warn('mcp-notebook: could not write a report', reason);
        showFailure(
          'report',
          'MCP flow output not written',
          `A flow's ${live ? 'form' : 'result'} could not be written into its cell: ${reasonText(reason)}. ` +
            'The kernel sends it again when this page reconnects (reload the page).'
        );
      });
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
