export { atomically, ConcurrentChange } from '@mailer/kit';
