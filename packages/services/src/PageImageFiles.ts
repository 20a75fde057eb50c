/**
 * Page images are stored beside their document version's original file, in the version's folder
 * (`<project>/<document>/v<version>/pages/<n>.png`): whatever keeps or removes a version's folder keeps or
 * removes its page images with it.
 */
import { posix } from "node:path"

/** The blob key of the image of page `pageNumber` of the document version stored at `blobKey`. */
export const pageImageKey = (blobKey: string, pageNumber: number): string =>
  `${posix.dirname(blobKey)}/pages/${pageNumber}.png`

/** Every file a document version may have in the blob store: its original and its pages' images. */
export const documentVersionFiles = (version: {
  readonly blob_key: string
  readonly page_count: number
}): ReadonlyArray<string> => [
  version.blob_key,
  ...Array.from({ length: version.page_count }, (_, i) => pageImageKey(version.blob_key, i + 1)),
]
