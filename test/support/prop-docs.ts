import { resolve } from 'node:path';
import * as ts from 'typescript';

export interface PropDoc {
  /** The doc comment's text. */
  readonly text: string;
  /** Its `@default`, as written. */
  readonly default: string | undefined;
}

/**
 * The doc of every property of an interface as the TypeScript checker (and so an IDE, or the
 * declarations a consumer reads) sees it: a prop derived from the settings table through a mapped
 * type carries that table entry's doc comment.
 */
export const propDocs = (file: string, name: string): Map<string, PropDoc> => {
  const path = resolve(__dirname, '../..', file);
  const program = ts.createProgram([path], { strict: true, skipLibCheck: true, noEmit: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(path);
  const decl = source?.statements.find(
    (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === name,
  );
  if (!decl) throw new Error(`${file} declares no interface ${name}`);
  const docs = new Map<string, PropDoc>();
  for (const p of checker.getPropertiesOfType(checker.getTypeAtLocation(decl.name))) {
    const tag = p.getJsDocTags(checker).find((t) => t.name === 'default');
    const text = ts.displayPartsToString(p.getDocumentationComment(checker));
    const tags = p
      .getJsDocTags(checker)
      .map((t) => `@${t.name} ${ts.displayPartsToString(t.text)}`)
      .join('\n');
    docs.set(p.name, {
      text: `${text}\n${tags}`,
      default: tag ? ts.displayPartsToString(tag.text).trim() : undefined,
    });
  }
  return docs;
};
