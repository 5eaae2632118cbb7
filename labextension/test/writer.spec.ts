/**
 * One writer per record: `addressedHere` decides whether a save is this
 * page's to write, and `pageId` keeps a tab's id across its reloads.
 */

import { describe, expect, it } from '@jest/globals';

import { addressedHere, IPageStorage, PAGE_KEY, pageId } from '../src/writer';

const self = { page: 'page-aaaaaaaa', client: 'client-1' };

describe('addressedHere', () => {
  it('writes a save addressed to this tab, whatever its client id', () => {
    expect(addressedHere({ page: 'page-aaaaaaaa', client: 'old-client' }, self)).toBe(true);
  });

  it('leaves a save addressed to another tab, even from the same client id', () => {
    expect(addressedHere({ page: 'page-bbbbbbbb', client: 'client-1' }, self)).toBe(false);
  });

  it('goes by the client id when the kernel does not know the tab yet', () => {
    expect(addressedHere({ client: 'client-1' }, self)).toBe(true);
    expect(addressedHere({ client: 'client-2' }, self)).toBe(false);
    expect(addressedHere({ page: null, client: 'client-2' }, self)).toBe(false);
  });

  it('writes a save without a usable writer (an older kernel side)', () => {
    for (const writer of [undefined, null, 'x', 3, [], {}, { page: '' }, { client: 7 }]) {
      expect(addressedHere(writer, self)).toBe(true);
    }
    expect(addressedHere({ page: 'page-bbbbbbbb' }, undefined)).toBe(true);
  });
});

class MapStorage implements IPageStorage {
  items = new Map<string, string>();
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.items.set(key, value);
  }
}

describe('pageId', () => {
  it('is made once per tab and kept across reloads', () => {
    const tab = new MapStorage();
    const first = pageId(tab);
    expect(first).toMatch(/^[0-9a-f]{32}$/);
    expect(pageId(tab)).toBe(first);
    expect(tab.getItem(PAGE_KEY)).toBe(first);
  });

  it('differs between tabs', () => {
    expect(pageId(new MapStorage())).not.toBe(pageId(new MapStorage()));
  });

  it('replaces a kept value that is not an id (a page script wrote it)', () => {
    const tab = new MapStorage();
    tab.setItem(PAGE_KEY, '<img src=x onerror=alert(1)>');
    const made = pageId(tab);
    expect(made).toMatch(/^[0-9a-f]{32}$/);
    expect(tab.getItem(PAGE_KEY)).toBe(made);
  });
});
