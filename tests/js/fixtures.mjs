// Transcripts shared by the JS tests (a module, not a test file).

/** An OpenAI-chat transcript of `turns` old turns (a user task, a `read_log` call and its
 *  400-line output, a short answer) and a last user request. */
export function logDoc(turns = 6) {
  const msgs = [{ role: 'system', content: 'You are a careful agent.' }]
  for (let i = 0; i < turns; i++) {
    msgs.push({ role: 'user', content: `task ${i}: ${'detail '.repeat(60)}` })
    msgs.push({ role: 'assistant', content: null, tool_calls: [{ id: `o${i}`, type: 'function', function: { name: 'read_log', arguments: `{"n":${i}}` } }] })
    msgs.push({ role: 'tool', tool_call_id: `o${i}`, content: `log ${i} ${'line\n'.repeat(400)}` })
    msgs.push({ role: 'assistant', content: `read log ${i}` })
  }
  msgs.push({ role: 'user', content: 'write the report' })
  return msgs
}
