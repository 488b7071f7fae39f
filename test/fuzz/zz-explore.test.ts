import { it } from 'vitest';
import { createTestContext } from '../support/helper.js';
it('lists', async () => {
  const ctx = await createTestContext();
  const doc = ctx.app.swagger() as any;
  for (const [path, ops] of Object.entries<any>(doc.paths)) {
    if (!path.startsWith('/api/202203010900/') && !path.startsWith('/202111101200/')) continue;
    for (const [m, op] of Object.entries<any>(ops)) {
      const names = [...(op.parameters ?? []).map((p: any) => p.name), ...Object.keys(op.requestBody?.content?.['application/json']?.schema?.properties ?? {})];
      void m; void op;
    }
  }
  console.log(ctx.app.printRoutes({ commonPrefix: false, includeMeta: ['config', 'schema'] }).slice(0, 3000));
  await ctx.close();
});
