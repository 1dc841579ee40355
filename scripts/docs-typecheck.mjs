// The type check of the docs' fragments (the rule is in docs.test.mjs's
// header), run on a worker thread: docs.test.mjs passes each fragment's
// page line, language, prelude code and code, and the scratch project's
// folder; the worker answers with each fragment's errors.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parentPort, workerData } from 'node:worker_threads'
import ts from 'typescript'

/**
 * Type-checks the fragments in one TypeScript program, the way a reader's
 * strict project would compile them: each is a module of the scratch project
 * (its preludes, then the block; a ```js fragment is checked as JavaScript,
 * a ```tsx one with React's JSX), against the built packages' declarations.
 * Returns each fragment's errors, `page:line: message`, the line being the
 * page's.
 */
function typecheck(fragments, dir) {
  const files = fragments.map((fragment, index) => {
    const script = fragment.language.startsWith('j') ? 'js' : 'ts'
    const extension = ['tsx', 'jsx'].includes(fragment.language) ? `${script}x` : script
    const file = join(dir, `fragment-${index + 1}.${extension}`)
    // `export {}`: a module, so that fragments do not share names and may await
    writeFileSync(file, `${fragment.preludes}${fragment.code}export {}\n`)
    return { file, fragment, preludeLines: fragment.preludes.split('\n').length - 1 }
  })
  const program = ts.createProgram(
    files.map(({ file }) => file),
    {
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      jsx: ts.JsxEmit.ReactJSX,
      strict: true,
      noEmit: true,
      allowJs: true,
      checkJs: true,
      esModuleInterop: true,
      skipLibCheck: true,
      types: ['node'],
      typeRoots: [join(dir, 'node_modules', '@types')],
    },
  )
  const optionErrors = program
    .getOptionsDiagnostics()
    .concat(program.getGlobalDiagnostics())
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
  return files.map(({ file, fragment, preludeLines }) => {
    const source = program.getSourceFile(file)
    const page = fragment.where.slice(0, fragment.where.lastIndexOf(':'))
    const diagnostics = [
      ...program.getSyntacticDiagnostics(source),
      ...program.getSemanticDiagnostics(source),
    ]
    return [
      ...optionErrors,
      ...diagnostics.map((d) => {
        const message = ts.flattenDiagnosticMessageText(d.messageText, '\n')
        if (d.start === undefined) return message
        const at = source.getLineAndCharacterOfPosition(d.start).line - preludeLines
        // a line of a prelude is named as such; a line of the block, by the page's line
        return at < 0
          ? `${fragment.where} (in a prelude, line ${at + preludeLines + 1}): ${message}`
          : `${page}:${fragment.line + 1 + at}: ${message}`
      }),
    ]
  })
}

parentPort.postMessage(typecheck(workerData.fragments, workerData.dir))
