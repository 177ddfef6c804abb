import { InvalidArgumentsError } from '../../../errors.js';
import { defineTool } from '../module-tool.js';

export const JOKE_STYLES = ['pun', 'dad-joke', 'one-liner'] as const;
export type JokeStyle = (typeof JOKE_STYLES)[number];

/** Our own small collection: style -> category -> jokes. */
export const JOKES: Record<JokeStyle, Record<string, readonly string[]>> = {
  pun: {
    programming: [
      'I named my dog Git: he keeps fetching but never pulls his weight.',
      'Arrays start at zero, which is why my to-do list never gets to the first thing.',
      'My code and I have a lot in common: we both stop working when we are not commented on.',
    ],
    animals: [
      'The cat got a job at the call centre: she is good at putting people on paws.',
      'Owls make terrible comedians: their jokes are a hoot, but only after dark.',
    ],
    food: [
      'The baker retired: he had made enough dough and was ready to loaf around.',
      'I tried to catch some fog this morning, but I mist, so I had a cup of tea instead.',
    ],
    science: ['I would tell a chemistry joke, but all the good ones argon.', 'The photon checked into the hotel with no luggage: it was travelling light.'],
    general: ['The calendar is popular: it has a lot of dates.', 'I used to be a banker, but I lost interest.'],
  },
  'dad-joke': {
    programming: ['Why did the developer go broke? He used up all his cache.', 'Why do programmers prefer dark mode? Because light attracts bugs.'],
    animals: ['What do you call a sleeping bull? A bulldozer.', 'Why do fish live in salt water? Because pepper makes them sneeze.'],
    food: ['Why did the tomato blush? Because it saw the salad dressing.', 'What do you call cheese that is not yours? Nacho cheese.'],
    science: ['Why can you never trust an atom? They make up everything.', 'What did one magnet say to the other? I find you very attractive.'],
    general: ['Why did the scarecrow win an award? He was outstanding in his field.', 'I only know 25 letters of the alphabet. I do not know y.'],
  },
  'one-liner': {
    programming: [
      'There are two hard problems in computing: naming things, cache invalidation and off-by-one errors.',
      'It works on my machine, so we are shipping my machine.',
    ],
    animals: ['My dog used to chase people on a bike; it got so bad I had to take his bike away.', 'A cat has nine lives and spends eight of them asleep.'],
    food: ['I am on a seafood diet: I see food and I eat it.', 'Toast is just bread that has been through something.'],
    science: ['Gravity is a heavy subject, but I would not take it too lightly.', 'Schrödinger walks into a bar, and does not.'],
    general: ['I told my wall a joke; it cracked up.', 'I am reading a book on anti-gravity; I cannot put it down.'],
  },
};

const CATEGORY_WORDS: Record<string, readonly string[]> = {
  programming: ['program', 'code', 'coding', 'software', 'computer', 'developer', 'bug', 'git', 'typescript', 'javascript', 'python'],
  animals: ['animal', 'cat', 'dog', 'fish', 'bird', 'owl', 'pet', 'cow', 'bull'],
  food: ['food', 'cook', 'bread', 'cheese', 'pizza', 'eat', 'kitchen', 'tea', 'coffee'],
  science: ['science', 'physics', 'chemistry', 'atom', 'space', 'math', 'biology', 'gravity'],
};

/** The category a free-text topic falls in; `general` when nothing matches. */
export function jokeCategory(topic: string): string {
  const t = topic.toLowerCase();
  for (const [category, words] of Object.entries(CATEGORY_WORDS)) if (words.some((word) => t.includes(word))) return category;
  return 'general';
}

/** The joke service: config param `style`, argument `topic`. */
export default defineTool(({ config, arguments: args }) => {
  const style = (config['style'] ?? 'pun') as string;
  if (!(JOKE_STYLES as readonly string[]).includes(style)) {
    throw new InvalidArgumentsError(`unknown joke style ${JSON.stringify(style)}; expected one of ${JOKE_STYLES.join(', ')}`);
  }
  const topic = typeof args['topic'] === 'string' ? args['topic'] : '';
  const jokes = JOKES[style as JokeStyle][jokeCategory(topic)]!;
  return jokes[Math.floor(Math.random() * jokes.length)]!;
});
