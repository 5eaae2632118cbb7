/**
 * The CSP checks: `checkedDomains` keeps only plain origins (https/wss, or
 * http on localhost), lowercased and deduplicated, at most MAX_DOMAINS of
 * them; `checkedCsp` checks every list of a reply and `buildCsp` puts only
 * what passed into the App's policy.
 */

import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';

import {
  buildCsp,
  checkedCsp,
  checkedDomains,
  MAX_DOMAIN_LENGTH,
  MAX_DOMAINS
} from '../src/apps/csp';

let warn: ReturnType<typeof jest.spyOn>;

beforeEach(() => {
  warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
});

afterEach(() => {
  warn.mockRestore();
});

describe('checkedDomains', () => {
  it('keeps plain origins, with a port or a leading *. label', () => {
    const domains = [
      'https://api.example.com',
      'wss://live.example.com:8443',
      'https://*.cdn.example.org',
      'http://localhost:8000',
      'http://127.0.0.1'
    ];
    expect(checkedDomains(domains)).toEqual(domains);
    expect(warn).not.toHaveBeenCalled();
  });

  it('lowercases and deduplicates', () => {
    expect(
      checkedDomains(['https://API.Example.com', 'https://api.example.com'])
    ).toEqual(['https://api.example.com']);
  });

  it.each([
    ['a bare wildcard', '*'],
    ['a scheme wildcard', 'https://*'],
    ['a wildcard inside the host', 'https://api.*.example.com'],
    ['a path', 'https://example.com/path'],
    ['a trailing slash', 'https://example.com/'],
    ['a query', 'https://example.com?x=1'],
    ['javascript:', 'javascript:alert(1)'],
    ['data:', 'data:'],
    ['a keyword', "'unsafe-eval'"],
    ['plain http off localhost', 'http://example.com'],
    ['a scheme-less host', 'example.com'],
    ['a second directive', 'https://example.com; script-src *'],
    ['a space', 'https://a.example.com https://b.example.com'],
    ['a quote', 'https://example.com"'],
    ['user info', 'https://user@example.com'],
    ['an empty string', '']
  ])('refuses %s, with a warning', (_words, domain) => {
    expect(checkedDomains([domain, 'https://ok.example.com'])).toEqual([
      'https://ok.example.com'
    ]);
    expect(warn).toHaveBeenCalledWith(
      'mcp-notebook: App CSP domain dropped',
      domain
    );
  });

  it('refuses entries that are not strings', () => {
    const odd = [
      42,
      null,
      { origin: 'https://x.example.com' },
      ['https://y.example.com']
    ];
    expect(checkedDomains(odd)).toEqual([]);
    expect(warn).toHaveBeenCalledTimes(4);
  });

  it('refuses an overlong origin', () => {
    const long = `https://${'a'.repeat(MAX_DOMAIN_LENGTH)}.example.com`;
    expect(checkedDomains([long])).toEqual([]);
  });

  it(`keeps at most ${MAX_DOMAINS} origins of an oversized list`, () => {
    const many = Array.from(
      { length: MAX_DOMAINS * 4 },
      (_, i) => `https://h${i}.example.com`
    );
    const kept = checkedDomains(many);
    expect(kept).toHaveLength(MAX_DOMAINS);
    expect(kept).toEqual(many.slice(0, MAX_DOMAINS));
  });

  it('reads anything but a list as no domains', () => {
    const notLists = [
      undefined,
      null,
      'https://example.com',
      { 0: 'https://example.com' }
    ];
    for (const raw of notLists) {
      expect(checkedDomains(raw)).toEqual([]);
    }
  });
});

describe('checkedCsp', () => {
  it('checks every list and fills the missing ones', () => {
    expect(
      checkedCsp({
        connectDomains: ['https://api.example.com', 'javascript:alert(1)'],
        resourceDomains: ['https://cdn.example.com/lib.js'],
        frameDomains: 'https://frames.example.com',
        extra: ['https://ignored.example.com']
      })
    ).toEqual({
      connectDomains: ['https://api.example.com'],
      resourceDomains: [],
      frameDomains: [],
      baseUriDomains: []
    });
  });

  it.each([[undefined], [null], ['default-src *'], [['https://example.com']]])(
    'reads %p as no domains at all',
    raw => {
      expect(checkedCsp(raw)).toEqual({
        connectDomains: [],
        resourceDomains: [],
        frameDomains: [],
        baseUriDomains: []
      });
    }
  );

  it('gives buildCsp a policy that holds only what passed', () => {
    const policy = buildCsp(
      checkedCsp({
        connectDomains: ['https://api.example.com', 'https://*', '*'],
        resourceDomains: ["'unsafe-eval'", 'https://cdn.example.com'],
        frameDomains: ['https://x.example.com; frame-src *']
      })
    );
    expect(policy).toContain('connect-src https://api.example.com;');
    expect(policy).toContain(
      "script-src 'unsafe-inline' data: blob: https://cdn.example.com;"
    );
    expect(policy).toContain("frame-src 'none';");
    expect(policy).toContain("base-uri 'none';");
    expect(policy).not.toContain('unsafe-eval');
    expect(policy).not.toContain('*');
    expect(policy.startsWith("default-src 'none'; ")).toBe(true);
  });
});
