/**
 * mcp-notebook front end (JupyterLab 4.6 and Notebook 7): the plugin.
 *
 * The kernel side of mcp-notebook keeps MCP flows that wait for input.  This
 * extension keeps them in the notebook's metadata (`flows.ts`), answers the
 * kernel's comm (`comm.ts`, which also writes flows' reports into cells:
 * `reports.ts`), marks the forms of a gone kernel stale (`stale.ts`), relays
 * OAuth sign-ins to the kernel (`oauth.ts`), renders MCP Apps in outputs
 * (`apps/`) and keeps a notebook that is not trusted from restoring saved
 * widgets that carry code (`widget_guard.ts`).  `panel.ts` sets up each
 * notebook view; this file only wires the plugin.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';

import { APP_RANK } from './apps/data';
import { AppHub } from './apps/hub';
import { appRendererFactory } from './apps/output';
import { safeSend } from './comm';
import { OAuthRelay } from './oauth';
import { appHostLocator, setupPanel } from './panel';

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
    rendermime?.addFactory(appRendererFactory(hub), APP_RANK);
    tracker.widgetAdded.connect((_, panel) =>
      setupPanel(panel, seen, relay, hub)
    );
    tracker.forEach(panel => setupPanel(panel, seen, relay, hub));
  }
};

export default plugin;
