/**
 * A received notebook's saved widget state: which models carry code
 * (`carriesCode`, `withoutCode`) and whether the notebook is trusted
 * (`notebookTrusted`), the two facts `widget_guard.ts` acts on.
 */

import { describe, expect, it } from '@jest/globals';

import {
  carriesCode,
  ICellTrust,
  notebookTrusted,
  WIDGET_STATE_MIME,
  withoutCode
} from '../src/widget_state';

const layout = {
  model_name: 'LayoutModel',
  model_module: '@jupyter-widgets/base',
  model_module_version: '2.0.0',
  state: {}
};
const slider = {
  model_name: 'IntSliderModel',
  model_module: '@jupyter-widgets/controls',
  model_module_version: '2.0.0',
  state: { value: 3 }
};
const any = {
  model_name: 'AnyModel',
  model_module: 'anywidget',
  model_module_version: '~0.11.*',
  state: { _esm: 'fetch("/api/contents/x", {method: "PUT"})' }
};

describe('carriesCode', () => {
  it('finds an anywidget model, by its module or its state', () => {
    expect(carriesCode(any)).toBe(true);
    expect(carriesCode({ ...any, state: {} })).toBe(true);
    expect(carriesCode({ model_name: 'X', state: { _model_module: 'anywidget' } })).toBe(true);
    expect(carriesCode({ model_name: 'X', state: { _view_module: 'anywidget' } })).toBe(true);
  });

  it('finds any model that carries a module or style sheet, in its state or its buffers', () => {
    expect(carriesCode({ model_module: 'ipyreact', state: { _esm: 'x' } })).toBe(true);
    expect(carriesCode({ model_module: 'other', state: { _css: 'x' } })).toBe(true);
    expect(
      carriesCode({ model_module: 'other', state: {}, buffers: [{ path: ['_esm'], data: 'eA==' }] })
    ).toBe(true);
  });

  it('counts an entry it cannot read as carrying code', () => {
    for (const entry of [null, 'x', 3, []]) {
      expect(carriesCode(entry)).toBe(true);
    }
  });

  it('leaves models that only hold values', () => {
    expect(carriesCode(layout)).toBe(false);
    expect(carriesCode(slider)).toBe(false);
    expect(carriesCode({ ...slider, buffers: [{ path: ['value'] }] })).toBe(false);
  });
});

describe('withoutCode', () => {
  it('removes the models that carry code and keeps the rest of the metadata', () => {
    const widgets = {
      [WIDGET_STATE_MIME]: {
        version_major: 2,
        version_minor: 0,
        state: { a: layout, b: any, c: slider }
      },
      other: { kept: true }
    };
    expect(withoutCode(widgets)).toEqual({
      widgets: {
        [WIDGET_STATE_MIME]: {
          version_major: 2,
          version_minor: 0,
          state: { a: layout, c: slider }
        },
        other: { kept: true }
      },
      removed: ['b']
    });
    expect(Object.keys(widgets[WIDGET_STATE_MIME].state)).toEqual(['a', 'b', 'c']); // not modified
  });

  it('says there is nothing to do when no model carries code or there is no saved state', () => {
    const clean = { [WIDGET_STATE_MIME]: { state: { a: layout } } };
    for (const widgets of [undefined, null, 'x', {}, { [WIDGET_STATE_MIME]: 'x' }, { [WIDGET_STATE_MIME]: {} }, clean]) {
      expect(withoutCode(widgets)).toBeNull();
    }
  });
});

function cell(type: string, trusted: boolean, source = 'x = 1', outputs = 0): ICellTrust {
  return { type, trusted, sharedModel: { getSource: () => source }, outputs: { length: outputs } };
}

describe('notebookTrusted', () => {
  it('is trusted when every code cell is, whatever the markdown cells say', () => {
    expect(notebookTrusted([cell('code', true), cell('markdown', false), cell('code', true, '')])).toBe(true);
    expect(notebookTrusted([cell('code', true, '', 1)])).toBe(true);
  });

  it('is not trusted when one code cell is not', () => {
    expect(notebookTrusted([cell('code', true), cell('code', false)])).toBe(false);
    expect(notebookTrusted([cell('code', false), cell('markdown', true)])).toBe(false);
  });

  it('is not trusted with no code cell, or only the empty one JupyterLab adds to a notebook saved without cells', () => {
    expect(notebookTrusted([])).toBe(false);
    expect(notebookTrusted([cell('markdown', true)])).toBe(false);
    expect(notebookTrusted([cell('code', true, '', 0)])).toBe(false);
    expect(notebookTrusted([cell('raw', true), cell('code', true, '')])).toBe(false);
  });
});
