// The registry of render blocks against the annotation groups: every group has its block (or
// says it prints nothing, its setting applied in Lua), every slot function of a block is placed
// in the fixed slot order, and a block's declaration agrees with its group's field scopes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ANNOTATION_GROUPS } from '../../../../src/model/ingress/annotations/index.js';
import { LOCATION_LAYOUT, RENDER_BLOCKS, SERVER_LAYOUT, slotFunctions } from '../../../../src/render/blocks/index.js';
import type { LocationBlock, RenderBlock, ServerBlock } from '../../../../src/render/blocks/types.js';

test('every annotation group has exactly one render block, and every block renders a group', () => {
  const groups = ANNOTATION_GROUPS.map((g) => g.name).sort();
  const blocks = RENDER_BLOCKS.map((b) => b.group).sort();
  assert.equal(blocks, groups, 'add src/render/blocks/<group>.ts (or a Lua-only declaration) and list it in RENDER_BLOCKS');
});

test('a block applied in Lua prints nothing; one of a group with location fields prints in a location slot', () => {
  for (const b of RENDER_BLOCKS) {
    const group = ANNOTATION_GROUPS.find((g) => g.name === b.group)!;
    const scopes = new Set(Object.values(group.fields));
    if (b.applied === 'lua') {
      assert.is(b.location ?? b.server ?? b.files, undefined, `${b.group} is applied in Lua but prints directives`);
      assert.equal([...scopes], ['backend'], `${b.group}: only backend fields reach Lua through the backends payload`);
    }
    if (scopes.has('location')) assert.ok(b.location, `${b.group} fills location fields but has no location part`);
  }
});

function slotsOf(part: object | undefined): string[] {
  return part ? Object.keys(part).filter((k) => typeof (part as Record<string, unknown>)[k] === 'function') : [];
}

test('each slot function of a block is in the layout under its slot, and each layout entry has it', () => {
  for (const b of RENDER_BLOCKS) {
    for (const slot of slotsOf(b.location)) {
      assert.ok(LOCATION_LAYOUT[slot as keyof LocationBlock].includes(b), `${b.group}: location.${slot} is not in LOCATION_LAYOUT.${slot}`);
    }
    for (const slot of slotsOf(b.server)) {
      assert.ok(SERVER_LAYOUT[slot as keyof ServerBlock].includes(b), `${b.group}: server.${slot} is not in SERVER_LAYOUT.${slot}`);
    }
  }
  for (const slot of Object.keys(LOCATION_LAYOUT) as Array<keyof LocationBlock>) slotFunctions<LocationBlock, typeof slot>(LOCATION_LAYOUT, 'location', slot);
  for (const slot of Object.keys(SERVER_LAYOUT) as Array<keyof ServerBlock>) slotFunctions<ServerBlock, typeof slot>(SERVER_LAYOUT, 'server', slot);
  const stray: RenderBlock = { group: 'stray', applied: 'directives' };
  assert.throws(() => slotFunctions<LocationBlock, 'access'>({ ...LOCATION_LAYOUT, access: [stray] }, 'location', 'access'), /stray is listed under access but has no location\.access/);
});

test('one block decides how a location proxies', () => {
  assert.is(LOCATION_LAYOUT.upstream.length, 1);
});

test.run();
