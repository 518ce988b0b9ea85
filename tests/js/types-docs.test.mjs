// The public types are documented where an editor shows them: every declaration the package's type entries
// export (pkg/package.json "exports" → "types") has a doc comment, and so does every property of every options
// object a user passes — the exported `…Options` types, the `options` parameters of exported functions, class
// constructors and methods, and the option objects nested in them (`policy.budget`, `task`, …). An optional
// property states its default (`@default`); a `number` property names its unit. The TypeScript compiler reads
// the built package (pkg/: scripts/build.sh copies pkg-template/'s .d.ts files there as they are).
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pkg = join(root, 'pkg');

/** Every .d.ts a user's import can reach by name: the "types" of each entry of "exports", and "types". */
function entries() {
  const pj = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
  const out = new Map();
  if (pj.types) out.set('.', join(pkg, pj.types));
  for (const [name, target] of Object.entries(pj.exports)) {
    if (target && typeof target === 'object' && typeof target.types === 'string') out.set(name, join(pkg, target.types));
  }
  return out;
}

// A unit, in words: what a number of an option counts or measures. `ms` is accepted as the brief's short
// form; the package's own comments spell "milliseconds".
const UNIT = /\b(milliseconds?|ms|seconds?|bytes?|KiB|MiB|counts?|times|ratio|fraction|percent|tokens?|characters?)\b|\ba number of\b/i;

// Exemptions, each with its reason. Keyed by the path the failure would name.
const NO_UNIT = new Map([
  ['WithRetryOptions.seed', 'a seed for the jitter generator: an arbitrary number, it measures nothing'],
  ['EngineOptions.seed', 'a seed for the jitter generator: an arbitrary number, it measures nothing'],
]);
// Types walked as options though their name does not end in `Options`: what a user passes as `filter`.
const OPTION_TYPES = new Set(['UnresolvedFilter']);

const docOf = (sym, checker) => ts.displayPartsToString(sym.getDocumentationComment(checker)).trim();
const tagsOf = (sym, checker) => sym.getJsDocTags(checker);
const where = (decl) => {
  const sf = decl.getSourceFile();
  const { line } = sf.getLineAndCharacterOfPosition(decl.getStart());
  return `${relative(root, sf.fileName)}:${line + 1}`;
};
const isOptionsName = (name) => /Options$/.test(name) || OPTION_TYPES.has(name);

function survey() {
  const files = entries();
  const program = ts.createProgram([...new Set(files.values())], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2022.d.ts', 'lib.esnext.disposable.d.ts', 'lib.dom.d.ts'],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  const report = { declarations: new Map(), options: new Map(), undocumented: [], noUnit: [], noDefault: [], exempted: [] };
  const seenProps = new Set();
  const seenTypes = new Set();

  /** Checks the properties of one options object type (`path`: how the user reaches it), then its nested ones. */
  function walkOptions(type, path) {
    if (!type) return;
    if (type.isUnion() || type.isIntersection()) {
      for (const t of type.types) walkOptions(t, path);
      return;
    }
    if (!(type.flags & ts.TypeFlags.Object)) return;
    if (type.getCallSignatures().length > 0 || checker.isArrayType(type) || checker.isTupleType(type)) return;
    const sym = type.aliasSymbol ?? type.getSymbol();
    if (!sym) return;
    // Only the package's own types: a peer's (the AI SDK's `ToolExecutionOptions`) is documented where it lives.
    if (!(sym.declarations ?? []).some((d) => d.getSourceFile().fileName.startsWith(pkg))) return;
    const literal = (sym.flags & ts.SymbolFlags.TypeLiteral) !== 0;
    const named = (sym.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias)) !== 0 && isOptionsName(sym.name);
    if (!literal && !named) return;
    const typeKey = type.id ?? type;
    if (seenTypes.has(typeKey)) return;
    seenTypes.add(typeKey);
    const base = named && !path.endsWith(sym.name) ? sym.name : path;
    for (const prop of checker.getPropertiesOfType(type)) {
      if (prop.flags & ts.SymbolFlags.Method) continue; // a method of a shape handed in (a module, a store): not an option
      const decl = prop.valueDeclaration ?? prop.declarations?.[0];
      if (!decl) continue;
      const owner = decl.parent;
      const ownerName = owner?.name?.text ?? (ts.isTypeLiteralNode(owner) ? null : undefined);
      const at = ownerName && isOptionsName(ownerName) ? `${ownerName}.${prop.name}` : `${base}.${prop.name}`;
      const key = `${decl.getSourceFile().fileName}:${decl.pos}`;
      const propType = checker.getTypeOfSymbol(prop);
      if (!seenProps.has(key)) {
        seenProps.add(key);
        const doc = docOf(prop, checker);
        const tags = tagsOf(prop, checker);
        report.options.set(at, { doc, where: where(decl) });
        if (!doc) report.undocumented.push(`${at} (${where(decl)})`);
        if ((prop.flags & ts.SymbolFlags.Optional) && !tags.some((t) => t.name === 'default' || t.name === 'defaultValue')) {
          report.noDefault.push(`${at} (${where(decl)})`);
        }
        const nn = checker.getNonNullableType(propType);
        const numeric = nn.isUnion() ? nn.types.some((t) => t.flags & ts.TypeFlags.NumberLike) : (nn.flags & ts.TypeFlags.NumberLike) !== 0;
        if (numeric) {
          const text = [doc, ...tags.map((t) => ts.displayPartsToString(t.text ?? []))].join(' ');
          if (NO_UNIT.has(at)) report.exempted.push(`${at}: ${NO_UNIT.get(at)}`);
          else if (!UNIT.test(text)) report.noUnit.push(`${at} (${where(decl)})`);
        }
      }
      walkOptions(checker.getNonNullableType(propType), at);
    }
  }

  /** The `options` parameters (and those typed `…Options`) of one signature declaration. */
  function walkParameters(decl, name) {
    for (const p of decl.parameters ?? []) {
      const pname = p.name.getText();
      const type = checker.getTypeAtLocation(p);
      const nn = checker.getNonNullableType(type);
      const parts = nn.isUnion() || nn.isIntersection() ? nn.types : [nn];
      const namedOptions = parts.some((t) => {
        const s = t.aliasSymbol ?? t.getSymbol();
        return s && isOptionsName(s.name);
      });
      if (pname === 'options' || pname === 'filter' || namedOptions) walkOptions(nn, `${name}(${pname})`);
    }
  }

  /** An exported class or interface: its constructors' docs and every method's options. */
  function walkMembers(sym, name) {
    for (const decl of sym.declarations ?? []) {
      if (!ts.isClassDeclaration(decl) && !ts.isInterfaceDeclaration(decl)) continue;
      for (const m of decl.members) {
        if (ts.isConstructorDeclaration(m)) {
          if (m.parameters.length > 0 && m.modifiers?.every((x) => x.kind !== ts.SyntaxKind.PrivateKeyword) !== false) {
            const ctorDoc = ts.getJSDocCommentsAndTags(m).length > 0;
            report.declarations.set(`${name}.constructor`, { doc: ctorDoc, where: where(m) });
            if (!ctorDoc) report.undocumented.push(`${name}.constructor (${where(m)})`);
          }
          walkParameters(m, `new ${name}`);
        } else if (ts.isMethodDeclaration(m) || ts.isMethodSignature(m)) {
          walkParameters(m, `${name}.${m.name.getText()}`);
        }
      }
    }
  }

  const seenDecls = new Set();
  for (const [entry, file] of files) {
    const sf = program.getSourceFile(file);
    assert.ok(sf, `${entry}: ${file} is in the program`);
    const moduleSym = checker.getSymbolAtLocation(sf);
    assert.ok(moduleSym, `${entry}: ${file} is a module`);
    for (const exp of checker.getExportsOfModule(moduleSym)) {
      const target = exp.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exp) : exp;
      if (seenDecls.has(target)) continue;
      seenDecls.add(target);
      const name = exp.name;
      const decls = target.declarations ?? [];
      const doc = docOf(target, checker) || docOf(exp, checker);
      report.declarations.set(name, { doc, where: decls[0] ? where(decls[0]) : entry });
      if (!doc) report.undocumented.push(`${name} (${decls[0] ? where(decls[0]) : entry})`);
      for (const d of decls) {
        if (ts.isFunctionDeclaration(d)) walkParameters(d, name);
        if ((ts.isInterfaceDeclaration(d) || ts.isTypeAliasDeclaration(d)) && isOptionsName(name)) {
          walkOptions(checker.getDeclaredTypeOfSymbol(target), name);
        }
      }
      if (target.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Interface)) walkMembers(target, name);
    }
  }
  return report;
}

const report = survey();

test('every exported declaration of every public type entry has a doc comment', () => {
  const missing = report.undocumented.filter((s) => report.declarations.has(s.split(' ')[0]));
  assert.deepEqual(missing, [], `undocumented exports:\n  ${missing.join('\n  ')}`);
});

test('every property of every options object has a doc comment', () => {
  const missing = report.undocumented.filter((s) => report.options.has(s.split(' ')[0]));
  assert.deepEqual(missing, [], `undocumented options:\n  ${missing.join('\n  ')}`);
});

test('every optional option states its default (@default)', () => {
  assert.deepEqual(report.noDefault, [], `options without @default:\n  ${report.noDefault.join('\n  ')}`);
});

test('every number option names its unit (milliseconds, bytes, a count, a ratio, …)', () => {
  assert.deepEqual(report.noUnit, [], `number options without a unit:\n  ${report.noUnit.join('\n  ')}`);
});

test('the survey reached the options it must (a walk that finds nothing proves nothing)', () => {
  const undocumentedDecls = report.undocumented.filter((s) => report.declarations.has(s.split(' ')[0])).length;
  console.log(`surveyed ${report.declarations.size} declarations (${undocumentedDecls} undocumented) and ${report.options.size} option properties ` +
    `(${report.undocumented.length - undocumentedDecls} undocumented, ${report.noDefault.length} without @default, ${report.noUnit.length} numbers without a unit)`);
  console.log(`exempt from the unit rule: ${report.exempted.length ? report.exempted.join('; ') : 'none'}`);
  for (const at of [
    'PolicyOptions.maxAttempts', 'PolicyOptions.hedgeAfterMs', 'PolicyOptions.budget.capacity', 'PolicyOptions.breaker.openMs',
    'WithRetryOptions.journal', 'WithRetryOptions.parts', 'WithRetryOptions.opentelemetry', 'CallOptions.signal', 'CallOptions.task.ttl',
    'OperationLedgerOptions.unresolvedCacheMs', 'LedgerRulesOptions.ttlMs', 'LedgerRulesOptions.leaseMs', 'IdempotencyOptions.transaction',
    'StatusToolOptions.tenant', 'SubrequestBudgetOptions.limit', 'SharedBreakerOptions.ttlMs', 'CheckOptions.timeoutMs',
    'AiSdkToolsOptions.intent', 'InstallRetryOptions.servers', 'SqliteLedgerStoreOptions.transactionTimeoutMs', 'MemoryJournalOptions.maxSettled',
  ]) {
    assert.ok(report.options.has(at), `${at} was surveyed`);
  }
  for (const name of ['withRetry', 'RetryEngine', 'observeFetch', 'OperationLedger', 'withIdempotency', 'statusTool', 'registerStatusTool',
    'SubrequestBudget', 'SharedBreaker', 'checkServer', 'aiSdkTools', 'retryingMcp', 'installRetry', 'hedging']) {
    assert.ok(report.declarations.has(name), `${name} was surveyed`);
  }
});
