import { buildTestApp } from '/work/main/test/helper.js';
const s = await buildTestApp();
const r = await s.request('GET', '/v1/accounts?pageSize=0');
console.log(r.statusCode, r.body);
s.ctx.config.logLevel;
