/**
 * One notebook view (JupyterLab or Notebook 7): its kernels, its markers,
 * its stale forms, its saved widget state, and where its App outputs find
 * their comm.
 */

import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { Widget } from '@lumino/widgets';

import { APP_MIME, APP_RANK } from './apps/data';
import type { AppHub, IAppHost } from './apps/hub';
import { appRendererFactory } from './apps/output';
import { hookKernel, latestComm } from './comm';
import { METADATA_KEY, updateMarkers } from './flows';
import type { OAuthRelay } from './oauth';
import { showLostLiveAreas } from './lost';
import { KernelGone, markPanelStale } from './stale';
import { guardSavedWidgets } from './widget_guard';

/** Set up one notebook view (JupyterLab or Notebook 7). */
export function setupPanel(
  panel: NotebookPanel,
  seen: WeakSet<NotebookPanel>,
  relay: OAuthRelay,
  hub: AppHub
): void {
  if (seen.has(panel)) {
    return;
  }
  seen.add(panel);
  // First: the saved widget state must be checked before the manager restores it.
  guardSavedWidgets(panel);
  const context = panel.context;
  const sessionContext = panel.sessionContext;
  // Each notebook clones the app's registry when it is created; one created
  // before this plugin activated would lack the App renderer.
  const rendermime = panel.content.rendermime;
  if (!rendermime.getFactory(APP_MIME)) {
    rendermime.addFactory(appRendererFactory(hub), APP_RANK);
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
      showLostLiveAreas(panel);
    });
  };
  let lostScheduled = false;
  const scheduleLost = () => {
    if (lostScheduled) {
      return;
    }
    lostScheduled = true;
    requestAnimationFrame(() => {
      lostScheduled = false;
      showLostLiveAreas(panel);
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
    // A live area whose widget model is gone (reloaded page, new kernel): the widget
    // renderer writes its error into the outputs' DOM once the manager has restored.
    const outputs = new MutationObserver(scheduleLost);
    outputs.observe(panel.content.node, { childList: true, subtree: true });
    panel.disposed.connect(() => {
      outputs.disconnect();
      model.metadataChanged.disconnect(onMetadata);
      model.cells.changed.disconnect(schedule);
    });
  });
}

/**
 * The notebook of a rendered App output: the NotebookPanel among its
 * parents, else the tracked panel whose DOM holds it.
 */
export function appHostLocator(tracker: INotebookTracker) {
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
