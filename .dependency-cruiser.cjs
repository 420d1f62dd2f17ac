// The layers of src/ and their direction (docs/architecture.md#layers), checked by dependency-cruiser:
// `npm run check:layers` exits non-zero on any violation. A module may import its own layer and the layers
// below it, never one above:
//
//   entry -> app/wiring -> control plane and faults -> domains -> plumbing (scheduler, http, db, ctx) -> core
//
// Type-only imports count as imports (tsPreCompilationDeps), dynamic `import()` too. The table of which folder
// sits where is in docs/architecture.md#layers; keep the two in step.

/** One regular expression per layer, matched against the path from the repository's root. */
const LAYER = {
  entry: '^src/(cli[.]ts$|cli/|server[.]ts$|index[.]ts$|testkit/|client/)',
  app: '^src/(app|sandbox|create-context|modules)[.]ts$',
  control: '^src/(emulator|sessions|faults)/',
  domains: '^src/(domains|fixtures)/',
  scenarios: '^src/scenarios/',
  core: '^src/(lib/|core/|(config|version|webhook-verify)[.]ts$)',
};

/** The AppContext type and the per-sandbox runtime it carries: read by every layer from the domains down. */
const CONTEXT = '^src/(context[.]ts$|runtime/)';

/** `to` paths of the given layers. */
const above = (...layers) => ({ path: layers.map((name) => LAYER[name]) });

module.exports = {
  forbidden: [
    {
      name: 'domains-below-control-plane',
      comment:
        'A domain (src/domains, src/fixtures) imports no control plane (src/emulator, src/sessions), no faults, no app and no entry: ' +
        'what the control plane needs of a domain it calls; what a domain needs from above is handed in (docs/architecture.md#layers).',
      severity: 'error',
      from: { path: LAYER.domains },
      to: above('control', 'app', 'entry'),
    },
    {
      name: 'http-names-no-domain',
      comment:
        'HTTP plumbing (src/http) imports no domain, no control plane, no faults, no app and no entry: what it needs of a domain ' +
        '(API keys and tokens for authentication) is handed in by the app (docs/architecture.md#layers).',
      severity: 'error',
      from: { path: '^src/http/' },
      to: above('domains', 'control', 'app', 'entry'),
    },
    {
      name: 'scheduler-names-no-domain',
      comment:
        'The scheduler (src/scheduler) runs the job handlers the app hands it and names no domain, control plane, app or entry ' +
        '(docs/architecture.md#layers).',
      severity: 'error',
      from: { path: '^src/scheduler/' },
      to: above('domains', 'control', 'app', 'entry'),
    },
    {
      name: 'db-below-http',
      comment: 'The database layer (src/db) imports no http plumbing, no scheduler and nothing above (docs/architecture.md#layers).',
      severity: 'error',
      from: { path: '^src/db/' },
      to: { path: ['^src/(http|scheduler)/', LAYER.domains, LAYER.control, LAYER.app, LAYER.entry] },
    },
    {
      name: 'context-below-domains',
      comment:
        'src/context.ts (the AppContext type every layer reads) and src/runtime/ import nothing above the plumbing, except ' +
        'the type of the loaded fixtures that ctx carries (src/fixtures/fixtures.schema.ts, docs/architecture.md#layers).',
      severity: 'error',
      from: { path: CONTEXT },
      to: { path: [LAYER.domains, LAYER.control, LAYER.app, LAYER.entry], pathNot: '^src/fixtures/fixtures[.]schema[.]ts$' },
    },
    {
      name: 'core-imports-only-core',
      comment:
        'lib/core (src/lib, src/core, config.ts, version.ts, webhook-verify.ts) imports only lib/core: no db, no http, no domain ' +
        '(docs/architecture.md#layers).',
      severity: 'error',
      from: { path: LAYER.core },
      to: { path: '^src/', pathNot: LAYER.core },
    },
    {
      name: 'control-plane-below-app',
      comment: 'The control plane and faults (src/emulator, src/sessions, src/faults) import no app/wiring and no entry (docs/architecture.md#layers).',
      severity: 'error',
      from: { path: LAYER.control },
      to: above('app', 'entry'),
    },
    {
      name: 'scenarios-speak-http-only',
      comment:
        'The scenario engine (src/scenarios) drives a sandbox through its API, over a transport, as a client would: it imports ' +
        'lib/core, the scope names (src/http/scopes.ts) and its own folder, never a domain, the control plane or the app, so the ' +
        'same code runs in the CLI against --url and in the server over app.inject (docs/architecture.md#layers).',
      severity: 'error',
      from: { path: LAYER.scenarios },
      to: { path: '^src/', pathNot: [LAYER.core, LAYER.scenarios, '^src/http/scopes[.]ts$'] },
    },
    {
      name: 'scenarios-above-domains',
      comment:
        'Only the control plane, the app and the entry points use the scenario engine (src/scenarios): the domains and the ' +
        'plumbing below them never name it (docs/architecture.md#layers).',
      severity: 'error',
      from: { path: ['^src/(domains|fixtures|http|db|scheduler|runtime)/', '^src/context[.]ts$', LAYER.core] },
      to: { path: LAYER.scenarios },
    },
    {
      name: 'client-imports-only-core',
      comment:
        'The typed client (src/client, the package export service-sandbox/client) is an entry that imports only lib/core and ' +
        'its own folder, never the server: an app imports it into its tests without the emulator (docs/architecture.md#layers, ' +
        'docs/clients.md#typescript).',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: '^src/', pathNot: [LAYER.core, '^src/client/'] },
    },
    {
      name: 'app-below-entry',
      comment: 'The app/wiring (app.ts, sandbox.ts, create-context.ts, modules.ts) imports no entry point (docs/architecture.md#layers).',
      severity: 'error',
      from: { path: LAYER.app },
      to: above('entry'),
    },
    {
      name: 'src-not-to-scripts-or-tests',
      comment: 'The runtime never imports scripts/, test/ or bench/: the build bundles src/ alone (docs/architecture.md#layers).',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(scripts|test|bench)/' },
    },
    {
      name: 'no-circular',
      comment: 'No import cycle between modules of src/ (docs/architecture.md#layers).',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {

    doNotFollow: { path: 'node_modules' },
    // type-only imports are dependencies too: a layer that names another's type depends on it
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
