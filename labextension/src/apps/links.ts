/**
 * Links an App asks to open (`ui/open-link`) in JupyterLab: asked in a
 * dialog, by the rule of link_rule.ts.
 */

import { Dialog, showDialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { linkQuestion, openAgreedLink, readLink } from './link_rule';

/**
 * Ask before opening a link an App wants opened.  The dialog shows the whole
 * URL and, highlighted, the host as the browser reads it.
 */
export async function confirmOpenLink(
  url: unknown
): Promise<{ isError?: boolean }> {
  const parsed = readLink(url);
  if (!parsed) {
    return { isError: true };
  }
  const result = await showDialog({
    title: 'Open a link from an MCP App?',
    body: new Widget({ node: linkQuestion(url, parsed) }),
    buttons: [
      Dialog.cancelButton({ label: 'Cancel' }),
      Dialog.okButton({ label: 'Open' })
    ],
    defaultButton: 0
  });
  if (!result.button.accept) {
    return { isError: true };
  }
  openAgreedLink(parsed);
  return {};
}
