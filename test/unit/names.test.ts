// Namespaced names (src/catalog/names.ts): `SERVER__TOOL`, client-safe characters, 64-character
// limit with a hash of the full name, collisions resolved the same way whatever order servers
// answered in (seed behaviour: a stable catalog), and `mcpgate://SERVER/<original>` resource URIs.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { assignNames, nameKey, namespaceUri, sanitize, splitUri, NAME_PATTERN, type NameRequest } from '../../src/catalog/names.js';

const hash8 = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 8);

/** The assignment as sorted `[key, name]` pairs, for exact comparison. */
function entries(requests: readonly NameRequest[], separator?: string): [string, string][] {
  return [...assignNames(requests, separator).names.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

void describe('sanitize', { timeout: 5000 }, () => {
  void it('replaces every character outside [A-Za-z0-9_-] with _ and never returns ""', { timeout: 5000 }, () => {
    assert.equal(sanitize('my.server'), 'my_server');
    assert.equal(sanitize('a b/c:d-é'), 'a_b_c_d-_');
    assert.equal(sanitize('ok_Name-9'), 'ok_Name-9');
    assert.equal(sanitize(''), '_');
  });
});

void describe('assignNames', { timeout: 5000 }, () => {
  void it('prefixes each name with its server and the separator, without warnings when nothing changed', { timeout: 5000 }, () => {
    const { names, warnings } = assignNames([
      { server: 'fs', name: 'read' },
      { server: 'git', name: 'log' },
    ]);
    assert.deepEqual(
      [...names.entries()],
      [
        [nameKey('fs', 'read'), 'fs__read'],
        [nameKey('git', 'log'), 'git__log'],
      ],
    );
    assert.deepEqual(warnings, []);
  });

  void it('uses a custom separator', { timeout: 5000 }, () => {
    assert.deepEqual(entries([{ server: 'fs', name: 'read' }], '-'), [[nameKey('fs', 'read'), 'fs-read']]);
  });

  void it('sanitizes server and tool names and warns about the published name', { timeout: 5000 }, () => {
    const { names, warnings } = assignNames([{ server: 'my.server', name: 'read file' }]);
    assert.equal(names.get(nameKey('my.server', 'read file')), 'my_server__read_file');
    assert.deepEqual(warnings, ['"read file" of server "my.server" is published as "my_server__read_file" (client-safe name)']);
  });

  void it('truncates a long name to 64 characters ending in a hash of the full name', { timeout: 5000 }, () => {
    const long = 'a'.repeat(100);
    const { names, warnings } = assignNames([{ server: 's', name: long }]);
    const expected = `${`s__${long}`.slice(0, 55)}_${hash8(`s__${long}`)}`;
    assert.equal(expected.length, 64);
    assert.equal(names.get(nameKey('s', long)), expected);
    assert.deepEqual(warnings, [`"${long}" of server "s" is published as "${expected}" (client-safe name)`]);
  });

  void it('keeps two long names with the same 55-character start distinct', { timeout: 5000 }, () => {
    const a = `${'x'.repeat(70)}_one`;
    const b = `${'x'.repeat(70)}_two`;
    const { names } = assignNames([
      { server: 's', name: a },
      { server: 's', name: b },
    ]);
    const na = names.get(nameKey('s', a))!;
    const nb = names.get(nameKey('s', b))!;
    assert.notEqual(na, nb);
    for (const n of [na, nb]) assert.match(n, NAME_PATTERN);
    assert.equal(na, `s__${'x'.repeat(52)}_${hash8(`s__${a}`)}`);
  });

  void it('fits a very long server name too', { timeout: 5000 }, () => {
    const server = 'S'.repeat(80);
    const name = assignNames([{ server, name: 't' }]).names.get(nameKey(server, 't'))!;
    assert.equal(name, `${'S'.repeat(55)}_${hash8(`${server}__t`)}`);
  });

  void it('every published name matches ^[A-Za-z0-9_-]{1,64}$', { timeout: 5000 }, () => {
    const requests: NameRequest[] = [
      { server: '', name: '' },
      { server: 'ü', name: 'ß' },
      { server: 'a'.repeat(64), name: 'b'.repeat(64) },
      { server: 'x y', name: 'z/w' },
      { server: 'x_y', name: 'z_w' },
      { server: 'x.y', name: 'z.w' },
    ];
    const { names } = assignNames(requests);
    assert.equal(names.size, requests.length);
    for (const name of names.values()) assert.match(name, NAME_PATTERN);
    assert.equal(new Set(names.values()).size, requests.length);
  });

  void it('resolves a collision in favour of the name that was already clean; the other gets a hash', { timeout: 5000 }, () => {
    // "x.y" sorts before "x_y" ('.' < '_'), but "x_y" needed no change, so it keeps "a__x_y".
    const { names, warnings } = assignNames([
      { server: 'a', name: 'x_y' },
      { server: 'a', name: 'x.y' },
    ]);
    assert.equal(names.get(nameKey('a', 'x_y')), 'a__x_y');
    assert.equal(names.get(nameKey('a', 'x.y')), `a__x_y_${hash8('a__x.y')}`);
    assert.deepEqual(warnings, [`"x.y" of server "a" collides with another name and is published as "a__x_y_${hash8('a__x.y')}"`]);
  });

  void it('resolves a collision between two changed names by sorted order', { timeout: 5000 }, () => {
    const { names } = assignNames([
      { server: 'a', name: 'x y' },
      { server: 'a', name: 'x.y' },
    ]);
    assert.equal(names.get(nameKey('a', 'x y')), 'a__x_y');
    assert.equal(names.get(nameKey('a', 'x.y')), `a__x_y_${hash8('a__x.y')}`);
  });

  void it('resolves a collision across the separator (a + b__c vs a__b + c) by server order', { timeout: 5000 }, () => {
    const { names } = assignNames([
      { server: 'a__b', name: 'c' },
      { server: 'a', name: 'b__c' },
    ]);
    assert.equal(names.get(nameKey('a', 'b__c')), 'a__b__c');
    assert.equal(names.get(nameKey('a__b', 'c')), `a__b__c_${hash8('a__b__c')}`);
  });

  void it('gives the same names and warnings for every input order', { timeout: 5000 }, () => {
    const requests: NameRequest[] = [
      { server: 'a', name: 'x.y' },
      { server: 'a', name: 'x_y' },
      { server: 'a', name: 'x y' },
      { server: 'a.b', name: 't' },
      { server: 'a_b', name: 't' },
      { server: 'z', name: 'q'.repeat(90) },
    ];
    const reference = assignNames(requests);
    const referenceEntries = entries(requests);
    // Rotations and reversals cover every element in every position.
    for (let shift = 0; shift < requests.length; shift++) {
      const rotated = [...requests.slice(shift), ...requests.slice(0, shift)];
      for (const order of [rotated, [...rotated].reverse()]) {
        assert.deepEqual(entries(order), referenceEntries);
        assert.deepEqual(assignNames(order).warnings, reference.warnings);
      }
    }
    assert.equal(new Set(reference.names.values()).size, requests.length);
  });

  void it('assigns a repeated request once', { timeout: 5000 }, () => {
    const { names, warnings } = assignNames([
      { server: 's', name: 't' },
      { server: 's', name: 't' },
    ]);
    assert.deepEqual([...names.entries()], [[nameKey('s', 't'), 's__t']]);
    assert.deepEqual(warnings, []);
  });
});

void describe('namespaceUri / splitUri', { timeout: 5000 }, () => {
  void it('prefixes the original URI untouched and splits it back', { timeout: 5000 }, () => {
    for (const original of ['file:///tmp/a b.txt', 'https://x.test/p?q=1#f', 'memo://{id}', 'mcpgate://other/x', '']) {
      const uri = namespaceUri('fs', original);
      assert.equal(uri, `mcpgate://fs/${original}`);
      assert.deepEqual(splitUri(uri), { serverKey: 'fs', uri: original });
    }
  });

  void it('splits at the first slash after the server key', { timeout: 5000 }, () => {
    assert.deepEqual(splitUri('mcpgate://git/repo/a/b'), { serverKey: 'git', uri: 'repo/a/b' });
  });

  void it('keeps the ui:// scheme of MCP Apps resources: ui://KEY/REST, split back to ui://REST', { timeout: 5000 }, () => {
    for (const original of ['ui://apps/chart.html', 'ui://chart', 'ui://apps/view/{id}']) {
      const uri = namespaceUri('viz', original);
      assert.equal(uri, `ui://viz/${original.slice('ui://'.length)}`);
      assert.deepEqual(splitUri(uri), { serverKey: 'viz', uri: original });
    }
    assert.equal(splitUri('ui://nokey'), undefined);
  });

  void it('rejects URIs that are not ours or have no server key', { timeout: 5000 }, () => {
    assert.equal(splitUri('file:///tmp/x'), undefined);
    assert.equal(splitUri('mcpgate:///x'), undefined);
    assert.equal(splitUri('mcpgate://fs'), undefined);
    assert.equal(splitUri('MCPGATE://fs/x'), undefined);
  });
});
