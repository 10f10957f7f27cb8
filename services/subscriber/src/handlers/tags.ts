// SubscriberService RPCs of tags: each parses its request and calls its use case in app/tags.ts.
import { accountOf, type AsyncHandlers } from '@mailer/kit';
import type { subscriberV1 } from '@mailer/proto';
import type { Deps } from '../app/deps';
import * as tags from '../app/tags';
import { parseId } from '../domain/ids';
import { validateTagName } from '../domain/tags';
import { tagToProto } from './mapping';

type TagRpcs = 'listTags' | 'addTag' | 'getTag' | 'renameTag' | 'deleteTag';

const toProto = (t: tags.CountedTag) => tagToProto(t.tag, t.subscriberCount);

export function tagHandlers(deps: Deps): Pick<AsyncHandlers<subscriberV1.SubscriberServiceServer>, TagRpcs> {
  return {
    async listTags(req) {
      return { items: (await tags.listTags(deps, { accountId: accountOf(req) })).map(toProto) };
    },

    async addTag(req) {
      const accountId = accountOf(req);
      const { name, key } = validateTagName(req.name);
      return { tag: toProto(await tags.addTag(deps, { accountId, name, key })) };
    },

    async getTag(req) {
      const accountId = accountOf(req);
      return { tag: toProto(await tags.getTag(deps, { accountId, tagId: parseId(req.tagId, 'tagId') })) };
    },

    async renameTag(req) {
      const accountId = accountOf(req);
      const tagId = parseId(req.tagId, 'tagId');
      const { name, key } = validateTagName(req.name);
      return { tag: toProto(await tags.renameTag(deps, { accountId, tagId, name, key })) };
    },

    async deleteTag(req) {
      const accountId = accountOf(req);
      await tags.deleteTag(deps, { accountId, tagId: parseId(req.tagId, 'tagId') });
      return {};
    },
  };
}
