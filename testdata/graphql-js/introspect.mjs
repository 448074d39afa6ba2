// Checks pgreflect's introspection answers with graphql-js, the reference implementation that GraphiQL,
// graphql-codegen and Apollo tooling build their client schemas with. Run by resolve/introspection_test.go.
//
//   node introspect.mjs query          prints the IntrospectionQuery of getIntrospectionQuery() (GraphiQL's default)
//   node introspect.mjs query full     the same with every option GraphiQL may turn on (descriptions of the
//                                      schema, specifiedByURL, isRepeatable, deprecation of input values,
//                                      isOneOf)
//   node introspect.mjs check          reads a response body {"data": {...}} on stdin and prints one line
//                                      RESULT {"built": bool, "error": string, "invalid": [string], "sdl": string}
import { buildClientSchema, getIntrospectionQuery, printSchema, validateSchema } from 'graphql';

const [mode, variant] = process.argv.slice(2);

if (mode === 'query') {
  const options = variant === 'full'
    ? { descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true, oneOf: true }
    : {};
  process.stdout.write(getIntrospectionQuery(options));
} else if (mode === 'check') {
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const body = JSON.parse(input);
  const result = { built: false, error: '', invalid: [], sdl: '' };
  try {
    if (body.errors) throw new Error('response has errors: ' + JSON.stringify(body.errors));
    const schema = buildClientSchema(body.data);
    result.built = true;
    result.invalid = validateSchema(schema).map((e) => e.message);
    result.sdl = printSchema(schema);
  } catch (e) {
    result.error = String(e && e.message ? e.message : e);
  }
  process.stdout.write('RESULT ' + JSON.stringify(result) + '\n');
} else {
  process.stderr.write('usage: node introspect.mjs query [full] | check\n');
  process.exit(2);
}
