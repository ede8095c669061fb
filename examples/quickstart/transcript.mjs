// A small OpenAI-chat session the quick starts compact: a request, then tool rounds with
// large results. (Your own transcript takes its place.)
export function transcript() {
  const messages = [{ role: 'system', content: 'You are a careful coding agent.' }, { role: 'user', content: 'Find why the parser fails on empty input.' }]
  for (let i = 1; i <= 8; i++) {
    messages.push({ role: 'assistant', content: null, tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path: `src/part${i}.rs` }) } }] })
    messages.push({ role: 'tool', tool_call_id: `call_${i}`, content: `// src/part${i}.rs\n` + 'fn parse(input: &str) -> Result<Ast, Error> { todo!() }\n'.repeat(60) })
  }
  messages.push({ role: 'assistant', content: 'The empty-input branch returns Err before the lexer runs.' })
  return messages
}
