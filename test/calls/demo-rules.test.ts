import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatCompletionFunctionTool, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { demoAnswer } from '../../src/calls/demo/rules.ts';

const tool = (name: string, description: string, properties: Record<string, unknown>, required: string[] = []): ChatCompletionFunctionTool => ({
  type: 'function', function: { name, description, parameters: { type: 'object', properties, required } },
});

const WEATHER = tool('get_weather', 'The weather forecast for a city', { city: { type: 'string' }, days: { type: 'integer' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, ['city']);
const BOOKING = tool('book_table', 'Book a table at the restaurant', { guests: { type: 'integer' }, name: { type: 'string' } }, ['guests']);
const END = tool('end_call', 'Hang up when the conversation is over', { message: { type: 'string' } });
const user = (content: string): ChatCompletionMessageParam => ({ role: 'user', content });

describe('the demo model\'s rules', () => {
  it('picks the tool whose words the caller used, with arguments from the caller\'s words', { timeout: 5_000 }, () => {
    const round = demoAnswer([user('What is the weather forecast in Paris for 3 days, in fahrenheit?')], [BOOKING, WEATHER, END], 'auto');
    assert.equal(round.text, '');
    assert.equal(round.toolCalls[0]?.name, 'get_weather');
    assert.deepEqual(JSON.parse(round.toolCalls[0].arguments), { city: 'Paris', days: 3, unit: 'fahrenheit' });
    const plain = demoAnswer([user('how is the weather in lyon')], [WEATHER], 'auto');
    assert.deepEqual(JSON.parse(plain.toolCalls[0]!.arguments), { city: 'lyon' });
    const booking = demoAnswer([user('Book a table for 4, name Ada')], [BOOKING], 'auto');
    assert.deepEqual(JSON.parse(booking.toolCalls[0]!.arguments), { guests: 4, name: 'Ada' });
  });

  it('asks for a required parameter it cannot fill, and says once that it is a demo', { timeout: 5_000 }, () => {
    const round = demoAnswer([user('I would like to book a table')], [BOOKING], 'auto');
    assert.deepEqual(round.toolCalls, []);
    assert.match(round.text, /^To use book_table I need the guests: what is it\? I am Parley's built-in demo model/);
    const again = demoAnswer([user('book a table'), { role: 'assistant', content: round.text }, user('book a table')], [BOOKING], 'auto');
    assert.equal(again.text, 'To use book_table I need the guests: what is it?');
  });

  it('hangs up on goodbye with end_call, answers in words when tools are not allowed, and greets', { timeout: 5_000 }, () => {
    assert.equal(demoAnswer([user('ok, goodbye')], [WEATHER, END], 'auto').toolCalls[0]?.name, 'end_call');
    assert.deepEqual(demoAnswer([user('weather in Paris')], [WEATHER], 'none').toolCalls, []);
    assert.match(demoAnswer([user('hi')], [WEATHER, END], 'auto').text, /^Hello! I can use get_weather \(The weather forecast for a city\): mention what you need\./);
  });

  it('reads the turn\'s tool results back, naming the tool', { timeout: 5_000 }, () => {
    const messages: ChatCompletionMessageParam[] = [
      user('weather in Paris'),
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'Sunny, 21 degrees.' },
    ];
    assert.match(demoAnswer(messages, [WEATHER], 'auto').text, /^get_weather answered: Sunny, 21 degrees\. I am Parley's/);
  });
});
