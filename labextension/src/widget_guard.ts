/**
 * Keep a received notebook's saved widget state from running script in the
 * page.  For a notebook that is not trusted (Jupyter's notebook trust), the
 * saved models that carry their own code (`widget_state.ts`) are taken out
 * of the notebook model's `metadata.widgets` before the widget manager
 * restores it, and a notice above the notebook says so.
 *
 * The manager (@jupyter-widgets/jupyterlab-manager) reads that metadata only
 * after the session is ready and the kernel has answered its comm query,
 * which is after the document's `ready`: acting then comes first.  The
 * metadata is checked again whenever it changes (a reload from disk reads
 * the file again; a later kernel change makes a new manager that restores
 * again).  Widgets the kernel creates live never pass through the saved
 * state, so they, and an App shown as a widget, work as before.  The file
 * on disk is not changed until the person saves.
 */

import type { NotebookPanel } from '@jupyterlab/notebook';
import { Widget } from '@lumino/widgets';

import { notebookTrusted, withoutCode } from './widget_state';

/** The class of the notice above a notebook whose saved widget code was not loaded. */
export const NOTICE_CLASS = 'mcp-notebook-widget-state-notice';

/** Watch one notebook view's saved widget state (see the module's note). */
export function guardSavedWidgets(panel: NotebookPanel): void {
  const context = panel.context;
  const check = () => {
    if (panel.isDisposed || !context.isReady) {
      return;
    }
    const model = context.model;
    if (notebookTrusted(model.cells)) {
      return;
    }
    const result = withoutCode(model.getMetadata('widgets'));
    if (!result) {
      return;
    }
    const wasDirty = model.dirty;
    model.setMetadata('widgets', result.widgets);
    // The file still holds the state; only a save by the person drops it.
    if (!wasDirty) {
      model.dirty = false;
    }
    showNotice(panel, result.removed.length);
  };
  void context.ready.then(() => {
    if (panel.isDisposed) {
      return;
    }
    check();
    const model = context.model;
    // Not from inside the metadata observer: a change made there would nest
    // in the transaction being reported.  A microtask still comes long
    // before the manager's restore, which waits on the kernel.
    const onMetadata = (_: unknown, change: { key: string }) => {
      if (change.key === 'widgets') {
        queueMicrotask(check);
      }
    };
    model.metadataChanged.connect(onMetadata);
    panel.disposed.connect(() => model.metadataChanged.disconnect(onMetadata));
  });
}

/** The notice (text only), once per view, updated with the latest count. */
function showNotice(panel: NotebookPanel, count: number): void {
  const text =
    `This notebook is not trusted, so the saved state of ${count} ` +
    `${count === 1 ? 'widget that carries' : 'widgets that carry'} ` +
    'its own code (anywidget) was not loaded: restoring it would run the ' +
    "notebook author's script in this page. Widgets the kernel creates when " +
    'you run cells work as usual. Saving leaves that state out of the file; ' +
    'to keep it, close without saving and, if you know where the notebook ' +
    'came from, run `jupyter trust` on it and open it again.';
  const old = panel.contentHeader.widgets.find(w =>
    w.hasClass(NOTICE_CLASS)
  );
  if (old) {
    old.node.querySelector('span')!.textContent = text;
    return;
  }
  const notice = new Widget();
  notice.addClass(NOTICE_CLASS);
  notice.node.setAttribute('role', 'status');
  const message = document.createElement('span');
  message.textContent = text;
  const close = document.createElement('button');
  close.type = 'button';
  close.textContent = 'Dismiss';
  close.addEventListener('click', () => notice.dispose());
  notice.node.append(message, close);
  panel.contentHeader.addWidget(notice);
  // The header's layout sizes its children by their minimum height (CSS),
  // not their content: keep that minimum at the wrapped text's height.
  const fit = () => {
    const height =
      Math.ceil(Math.max(message.offsetHeight, close.offsetHeight)) + 8;
    if (notice.node.style.minHeight !== `${height}px`) {
      notice.node.style.minHeight = `${height}px`;
      panel.contentHeader.fit();
    }
  };
  const watch = new ResizeObserver(fit);
  watch.observe(message);
  notice.disposed.connect(() => watch.disconnect());
}
