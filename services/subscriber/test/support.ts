export * from '@mailer/testing/subscriber';
