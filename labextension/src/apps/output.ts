/**
 * The labextension's renderer of an App output (`AppOutput`): an `AppView`
 * (view.ts, where the App's frames, policy and bridge live) on a Lumino
 * widget, reaching the kernel over the notebook's comm through the page's
 * hub, asking about links in a JupyterLab dialog.
 *
 * `view.ts` and what it imports (`csp.ts`, ext-apps' AppBridge, the MCP SDK
 * and zod under it) are not part of the extension's start: `loadView`
 * fetches them, once per page, as an async chunk of the bundle when the
 * first App output renders.  Until then an output is an empty node with the
 * classes and the first state ('new') the view gives it, so stale.ts treats
 * it as a view that has not started (a kernel restart leaves it to wait for
 * the new kernel's comm); the view shows the output's data once its code is in.
 */

import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Kernel } from '@jupyterlab/services';
import { Widget } from '@lumino/widgets';

import { FORM_CLASS, JSONObject, reasonText } from '../common';
import { showFailure } from '../failures';
import {
  APP_CLASS,
  APP_FALLBACK_TEXT_CLASS,
  APP_MIME,
  APP_NOTE_CLASS,
  APP_RANK,
  APP_STATUS_CLASS,
  IAppData,
  readAppData
} from './data';
import { AppHub, IAppHost, IAppRenderer } from './hub';
import { confirmOpenLink } from './links';
import type { AppView, IAppChannel } from './view';

const NO_COMM_NOTE =
  'No mcp-notebook connection to the kernel: run %load_ext mcp_notebook in this notebook to activate the App.';

/** The title of the (one per page) dialog for an App that could not open. */
const APP_FAILED_TITLE = 'MCP App could not open';

type ViewModule = typeof import('./view');

let viewModule: Promise<ViewModule> | null = null;

/**
 * The App's view code (`view.ts` and everything under it), fetched once per
 * page as the bundle's async chunk `mcp-notebook-apps`; a fetch that failed
 * is tried again by the next output that renders.
 */
export function loadView(): Promise<ViewModule> {
  if (!viewModule) {
    const loading = import(
      /* webpackChunkName: "mcp-notebook-apps" */ './view'
    );
    viewModule = loading;
    loading.catch(() => {
      if (viewModule === loading) {
        viewModule = null;
      }
    });
  }
  return viewModule;
}

/** A renderer factory for App outputs, bound to the page's hub. */
export function appRendererFactory(hub: AppHub): IRenderMime.IRendererFactory {
  return {
    safe: true,
    mimeTypes: [APP_MIME],
    defaultRank: APP_RANK,
    createRenderer: options => new AppOutput(options, hub)
  };
}

/** The rendered App output. */
export class AppOutput
  extends Widget
  implements IRenderMime.IRenderer, IAppRenderer
{
  constructor(options: IRenderMime.IRendererOptions, hub: AppHub) {
    super();
    this.hub = hub;
    this.mimeType = options.mimeType;
    // What AppView's constructor sets, at once: while the view's code loads,
    // the output is an App's that has not started (stale.ts skips state 'new').
    this.node.classList.add(APP_CLASS, FORM_CLASS);
    this.node.dataset.appState = 'new';
  }

  readonly mimeType: string;

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const fallback = model.data['text/plain'];
    const text =
      typeof fallback === 'string'
        ? fallback
        : Array.isArray(fallback)
          ? fallback.join('')
          : '';
    const data = readAppData(model.data[this.mimeType]);
    if (this.view) {
      this.view.show(data, text, this.isAttached);
      return Promise.resolve();
    }
    // Before the code is in, each render waits for it (in their order).
    return loadView().then(
      module => {
        if (this.isDisposed) {
          return;
        }
        this.view ??= this.createView(module);
        this.view.show(data, text, this.isAttached);
      },
      reason => this.notLoaded(data, text, reason)
    );
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.view?.dispose();
    if (this.host) {
      this.hub.unregister(this.host.key, this);
    }
    super.dispose();
  }

  reloadIfServer(server: string): void {
    this.view?.reloadIfServer(server);
  }

  commAvailable(): void {
    this.view?.channelAvailable(this.isAttached);
  }

  kernelGone(): void {
    this.view?.kernelGone();
  }

  protected onAfterAttach(): void {
    this.view?.attached();
  }

  protected onBeforeDetach(): void {
    this.view?.detaching();
  }

  /** The view on this node, now that its code is in. */
  private createView(module: ViewModule): AppView {
    this.node.replaceChildren(); // what notLoaded showed, if an earlier fetch failed
    return new module.AppView(this.node, {
      channel: () => this.channel(),
      noChannelNote: () =>
        this.host
          ? NO_COMM_NOTE
          : 'This output is not in a notebook with an mcp-notebook kernel connection.',
      confirmLink: url => confirmOpenLink(url),
      failure: text => showFailure('app', APP_FAILED_TITLE, text)
    });
  }

  /** The view's code could not be fetched: the tool's text, and why (the next render tries again). */
  private notLoaded(
    data: IAppData | null,
    text: string,
    reason: unknown
  ): void {
    if (this.isDisposed || this.view) {
      return;
    }
    console.warn('mcp-notebook: could not load the App code', reason);
    const status = document.createElement('div');
    status.className = APP_STATUS_CLASS;
    status.textContent = data
      ? `App: ${data.tool} from ${data.server} (${data.uri})`
      : 'App: (invalid App output)';
    const note = document.createElement('div');
    note.className = APP_NOTE_CLASS;
    note.setAttribute('role', 'status');
    note.textContent = `The App could not be shown: its code did not load (${reasonText(reason)}).`;
    const pre = document.createElement('pre');
    pre.className = APP_FALLBACK_TEXT_CLASS;
    pre.textContent = text;
    this.node.replaceChildren(status, note, pre);
    this.node.dataset.appState = 'fallback';
    showFailure(
      'app',
      APP_FAILED_TITLE,
      `The App code of mcp-notebook could not be loaded: ${reasonText(reason)}.`
    );
  }

  /** The notebook's comm, as the view's way to the kernel (null without one). */
  private channel(): IAppChannel | null {
    if (this.isDisposed) {
      return null;
    }
    if (!this.host) {
      this.host = this.hub.locate(this);
      if (this.host) {
        this.hub.register(this.host.key, this);
      }
    }
    const host = this.host;
    const comm: Kernel.IComm | null = host?.comm() ?? null;
    if (!host || !comm) {
      return null;
    }
    const hub = this.hub;
    return {
      open: () => !comm.isDisposed,
      request: (body: JSONObject) => hub.request(host.key, comm, body),
      send: (body: JSONObject) => {
        hub.send(comm, body);
      }
    };
  }

  private hub: AppHub;
  private host: IAppHost | null = null;
  private view: AppView | null = null;
}
