/**
 * The labextension's renderer of an App output (`AppOutput`): an `AppView`
 * (view.ts, where the App's frames, policy and bridge live) on a Lumino
 * widget, reaching the kernel over the notebook's comm through the page's
 * hub, asking about links in a JupyterLab dialog.
 */

import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Kernel } from '@jupyterlab/services';
import { Widget } from '@lumino/widgets';

import { JSONObject } from '../common';
import { showFailure } from '../failures';
import { APP_MIME, APP_RANK, readAppData } from './data';
import { AppHub, IAppHost, IAppRenderer } from './hub';
import { confirmOpenLink } from './links';
import { AppView, IAppChannel } from './view';

export { UNSIGNED_NOTE } from './view';

const NO_COMM_NOTE =
  'No mcp-notebook connection to the kernel: run %load_ext mcp_notebook in this notebook to activate the App.';

/** The title of the (one per page) dialog for an App that could not open. */
const APP_FAILED_TITLE = 'MCP App could not open';

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
    this.view = new AppView(this.node, {
      channel: () => this.channel(),
      noChannelNote: () =>
        this.host
          ? NO_COMM_NOTE
          : 'This output is not in a notebook with an mcp-notebook kernel connection.',
      confirmLink: url => confirmOpenLink(url),
      failure: text => showFailure('app', APP_FAILED_TITLE, text)
    });
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
    this.view.show(readAppData(model.data[this.mimeType]), text, this.isAttached);
    return Promise.resolve();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.view.dispose();
    if (this.host) {
      this.hub.unregister(this.host.key, this);
    }
    super.dispose();
  }

  reloadIfServer(server: string): void {
    this.view.reloadIfServer(server);
  }

  commAvailable(): void {
    this.view.channelAvailable(this.isAttached);
  }

  kernelGone(): void {
    this.view.kernelGone();
  }

  protected onAfterAttach(): void {
    this.view.attached();
  }

  protected onBeforeDetach(): void {
    this.view.detaching();
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
  private view: AppView;
}
