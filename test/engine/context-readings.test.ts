/**
 * Readings decided by context (src/engine/japanese-readings.ts, issue 25 point 2), one test per
 * rule: sentences where it must fire and sentences where it must not. None of these sentences is
 * in test/fixtures/ nor among those the rules were written from: they were written after the
 * rules, in three batches, each run once as it stood before anything was changed.
 * - Batch 1, 88 sentences: 2 misread. 日曜日家にいた (ニチヨービカ): a one-kanji suffix after a
 *   time adverb was decided from a list of adverbs; it now takes IPADIC's 名詞,副詞可能 and a
 *   native reading said alone. 島中に噂が stays wrong (below).
 * - Batch 2, 50 sentences: 4 misread. 毎日車で (マイニチシャ): IPADIC takes 毎日 for the
 *   newspaper there (固有名詞,組織), now a time adverb too. 興味のある方は, 参加したい方は
 *   (ホー): a verb before 方 as the topic is now a person. あられが降りそう stays wrong.
 * - Batch 3, 12 sentences written to test those changes: none misread.
 * - Batch 4 (issue 25's second pass: 後 ノチ, 人気 ヒトケ after a place or a time, 一目, 今日では,
 *   一枚上手, 入れる ハイレル, 町 チョー in addresses), 62 sentences written for the new rules while
 *   they were made: この通りは夜になると人気がなくなる (ニンキ) made the topic the sentence's,
 *   not only the word before 人気; 会員だけが入れる (イレル) let 入れる end a clause without an
 *   auxiliary; 千代田区神田須田町1-2-3 (マチ) made an address's number any number read out.
 * Known misses that stay (no rule can see them in IPADIC's analysis): 島中に噂が (IPADIC reads
 * 島中 as a family name), あられが降りそう (あられ split as the verb ある), 人気がなくて寂しい公園
 * (no place or time before 人気, and the noun after it is not its clause's), 夜中雨が (夜中 is not
 * tagged as a time adverb), 今日では間に合わない (今日では is taken for "nowadays", コンニチ, wherever
 * it stands), 店に入れなかった (can't get in, or didn't put in: a goal, に, stays
 * イレ), 彼は後に語った (a verb after 後に stays アト, as in 後に続く), and the towns in マチ that
 * IPADIC does not know (千代田区麹町三丁目, 神田小川町: チョー). On twelve Tokyo and Yokohama
 * addresses (人形町, 神保町, 小川町, 小伝馬町, 麹町, 永田町, 浜松町, 渋谷区本町, 尾上町, 相生町,
 * 伊勢佐木町, 須田町) the 町 rule took the right readings from 3 to 9.
 *
 * The expected reading is that of the word with a neighbour, as the engine hands it to eSpeak NG
 * (katakana, long vowels as ー).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { argumentBefore, contextReadings, EXCEPTIONS } from '../../src/engine/japanese-readings.js';
import { japaneseTokens } from '../../src/engine/japanese-words.js';
import { loadTokenizer, speechSegments } from '../../src/engine/japanese.js';

/** The kana the engine says for `text`. */
async function said(text: string): Promise<string> {
  return (await speechSegments(text, 'ja')).map((s) => s.text).join('');
}

/** Asserts that each sentence is said with its expected piece of reading. */
async function readsAs(cases: readonly (readonly [string, string])[]): Promise<void> {
  for (const [text, piece] of cases) {
    const kana = await said(text);
    assert.ok(kana.includes(piece), `${text} → ${kana}, expected …${piece}…`);
  }
}

test('開く: アク without an object; ヒラク with one, in the passive, and for what unfolds or is held', async () => {
  await readsAs([
    ['この美術館は月曜日も開いています。', 'モアイテイマス'],
    ['冷蔵庫のドアが少し開いていた。', 'スコシアイテイタ'],
    ['改札が開かないので駅員を呼んだ。', 'ガアカナイノデ'],
    ['窓口は朝早く開きます。', 'ハヤクアキマス'],
    ['寒いので窓が開かないようにした。', 'マドガアカナイ'],
  ]);
  // Must not fire: an object, the passive, something unfolding, an event held.
  await readsAs([
    ['彼は小さなカフェを開いた。', 'カフェヲヒライタ'],
    ['教科書を開いてください。', 'ヲヒライテ'],
    ['扉を開くと庭が見えた。', 'トビラヲヒラクト'],
    ['桜の花が開き始めた。', 'ハナガヒラキハジメタ'],
    ['点差が大きく開いた。', 'オーキクヒライタ'],
    ['来月、説明会が開かれます。', 'ガヒラカレマス'],
    ['毎年夏祭りを開いている。', 'ヲヒライテイル'],
    ['店長は毎年夏にセミナーを開く。', 'セミナーヲヒラク'],
    ['会は午後に開きます。', 'ゴゴニヒラキマス'],
  ]);
});

test('空く: スク for hunger and a thinning crowd, アク otherwise', async () => {
  await readsAs([
    ['お腹が空いたのでラーメンを食べた。', 'オナカガスイタ'],
    ['朝の電車は意外と空いていた。', 'イガイトスイテイタ'],
    ['道路が空いていて早く着いた。', 'ドーロガスイテイテ'],
  ]);
  await readsAs([
    ['この席、空いていますか。', 'アイテイマスカ'],
    ['駐車場に空いている場所がない。', 'ニアイテイル'],
    ['来週の午後なら空いています。', 'ナラアイテイマス'],
  ]);
});

test('降り: フリ when rain or snow falls, オリ when one gets off', async () => {
  await readsAs([['午後から雪が降りそうです。', 'ユキガフリソー']]);
  await readsAs([
    ['次の駅で降ります。', 'エキデオリマス'],
    ['タクシーから降りた。', 'カラオリタ'],
    ['霜が降りる季節になった。', 'シモガオリル'],
    ['エレベーターを降りた。', 'ヲオリタ'],
  ]);
});

test('後: アト as a noun, ゴ as a suffix after a noun, ノチ in 後ほど', async () => {
  await readsAs([
    ['授業が終わった後に質問した。', 'オワッタアトニ'],
    ['歯を磨いた後で寝る。', 'ミガイタアトデ'],
    ['お風呂の後にビールを飲む。', 'オフロノアトニ'],
    ['後から追いかけます。', 'アトカラ'],
    ['この後、天気は回復します。', 'コノアト'],
    ['掃除の後で出かけます。', 'ソージノアトデ'],
    ['話の続きは後にしよう。', 'ワアトニ'],
  ]);
  await readsAs([
    ['退院後は自宅で療養する。', 'タイインゴワ'],
    ['試合後のインタビュー。', 'シアイゴノ'],
    ['卒業後は海外で働きたい。', 'ソツギョーゴワ'],
    ['後ほどお電話します。', 'ノチホド'],
  ]);
});

test('後: ノチ before の + an age (後の世, 後の時代); アト before の + anything else', async () => {
  await readsAs([
    ['彼の発明は後の世の人々を助けた。', 'ノチノヨノ'],
    ['この様式は後の時代に広まった。', 'ノチノジダイニ'],
  ]);
  await readsAs([
    ['後の予定は未定です。', 'アトノヨテー'],
    ['後の祭りだった。', 'アトノマツリ'],
  ]);
});

test('今日まで: コンニチ before a verb of handing down; キョー before any other', async () => {
  await readsAs([
    ['この祭りは今日まで伝わっている。', 'コンニチマデツタワッテ'],
    ['祖父の技は今日まで語り継がれてきた。', 'コンニチマデカタリツガレテ'],
  ]);
  await readsAs([
    ['申し込みは今日まで受け付けます。', 'キョーマデウケツケ'],
    ['今日まで待ってください。', 'キョーマデマッテ'],
  ]);
});

test('目下: メシタ before の + people; モッカ elsewhere', async () => {
  await readsAs([
    ['目下の人に偉そうにするな。', 'メシタノヒト'],
    ['彼は目下の者をよく褒める。', 'メシタノモノ'],
  ]);
  await readsAs([
    ['目下のところ問題はない。', 'モッカノトコロ'],
    ['原因は目下調査中です。', 'モッカチョーサ'],
  ]);
});

test('下 after の: シタ, the place below, but in の下で and の下に (モト, under the care of)', async () => {
  await readsAs([
    ['鍵はマットの下か、植木鉢の中にある。', 'マットノシタカ'],
    ['猫が車の下から出てきた。', 'クルマノシタカラ'],
  ]);
  // IPADIC reads 下 モト (its dependent noun) only where the analysis leaves a particle like か
  // after it; with で or に after it, that モト is "under", and stays: the analysis of 座席の下か
  // with the particle で (from 座席の下で) for か.
  const tokenizer = await loadTokenizer();
  const tokens = tokenizer.tokenize('座席の下か');
  assert.equal(tokens[2]!.pronunciation, 'モト');
  assert.equal(contextReadings(tokens, (w) => tokenizer.tokenize(w))[2], 'シタ');
  const under = [...tokens.slice(0, 3), tokenizer.tokenize('座席の下で')[3]!];
  assert.equal(under[3]!.pos, '助詞');
  assert.equal(contextReadings(under, (w) => tokenizer.tokenize(w))[2], undefined);
});

test('中 glued to the next word after a period: the rest and a suffix after it re-read as one word', async () => {
  await readsAs([
    ['一日中部屋で本を読んだ。', 'イチニチジューヘヤデ'],
    ['一晩中部屋の明かりがついていた。', 'ヒトバンジューヘヤノ'],
  ]);
  await readsAs([['中部地方の天気。', 'チューブチホー']]);
});

test('中: ジュー after a period or a whole place, チュー in the course of something', async () => {
  await readsAs([
    ['家族で一晩中語り合った。', 'ジューカタリアッタ'],
    ['一晩中七転八倒した。', 'ヒトバンジューシチテン'],
    ['明日中に返事をします。', 'ジューニヘンジ'],
    ['東京中のホテルが満室だ。', 'トーキョージューノ'],
    ['顔中が泥だらけだ。', 'カオジューガ'],
    ['大阪中の店を回った。', 'オーサカジューノ'],
  ]);
  await readsAs([
    ['ただいま会議中です。', 'カイギチュー'],
    ['放送中の番組。', 'ホーソーチュー'],
    ['入院中の祖母を見舞った。', 'ニューインチュー'],
    ['今月中に提出してください。', 'コンゲツチュー'],
    ['休暇中はメールを見ません。', 'キューカチュー'],
    ['勤務中は私語を控える。', 'キンムチュー'],
    ['停電中はエレベーターが止まる。', 'テーデンチュー'],
  ]);
});

test('方: カタ for a person, ホー for a side, a direction or a comparison', async () => {
  await readsAs([
    ['その方のお名前を教えてください。', 'ソノカタノ'],
    ['初めてご来店の方はこちらへ。', 'ゴライテンノカタワ'],
    ['お困りの方はお知らせください。', 'オコマリノカタワ'],
    ['受付の方に書類を渡した。', 'ウケツケノカタニ'],
    ['参加者の方へお知らせします。', 'サンカシャノカタエ'],
    ['そちらの方がお待ちです。', 'ソチラノカタガ'],
    ['あの方にお礼を言いたい。', 'アノカタニ'],
    ['興味のある方はご連絡ください。', 'アルカタワ'],
    ['参加したい方はこちらへ。', 'シタイカタワ'],
    ['ご不明な点がある方は窓口へどうぞ。', 'アルカタワ'],
    ['写真を撮りたい方は前へどうぞ。', 'トリタイカタワ'],
    ['店員の方に聞いた。', 'テンインノカタニ'],
    ['乗客の方はお降りください。', 'ジョーキャクノカタワ'],
    ['記者の方が質問した。', 'キシャノカタガ'],
  ]);
  await readsAs([
    ['バスより電車の方が速い。', 'デンシャノホーガ'],
    ['海の方へ歩いていった。', 'ウミノホーエ'],
    ['早めに出た方がいい。', 'デタホーガイイ'],
    ['こちらの方が安いですよ。', 'コチラノホーガ'],
    ['どちらの方に進めばいいですか。', 'ドチラノホーニ'],
    ['大きい方を取ってください。', 'オーキイホーヲ'],
    ['早く行った方が早い。', 'イッタホーガ'],
    ['その方へ進んでください。', 'ソノホーエ'],
    ['子供の方が詳しい。', 'コドモノホーガ'],
    ['店の方に電話してください。', 'ミセノホーニ'],
    ['急いだ方がいい。', 'イソイダホーガ'],
    ['安い方を買った。', 'ヤスイホーヲ'],
    ['使った方を返してください。', 'ツカッタホーヲ'],
    ['定員の方が少ない。', 'テーインノホーガ'],
  ]);
});

test('人気: ヒトケ before の + ない/少ない and where a place or a time has none, ニンキ otherwise', async () => {
  await readsAs([
    ['人気の少ない路地は避けよう。', 'ヒトケノスクナイ'],
    ['人気のない駅のホーム。', 'ヒトケノナイ'],
    ['深夜の公園は人気がない。', 'コーエンワヒトケガナイ'],
    ['この通りは夜になると人気がなくなる。', 'ヒトケガナクナル'],
    ['人気がない路地を歩くのは怖い。', 'ヒトケガナイロジ'],
    ['朝は人気が少ない。', 'ヒトケガスクナイ'],
    ['冬の海は人気がなくて寂しい。', 'ヒトケガナクテ'],
  ]);
  // Must not fire: what lacks it is a person or a thing, a scope (では), or it is not scarce.
  await readsAs([
    ['人気の店に行列ができた。', 'ニンキノミセ'],
    ['このアニメは子供に人気がある。', 'ニンキガアル'],
    ['人気の観光地。', 'ニンキノカンコーチ'],
    ['あの歌手は最近人気がない。', 'サイキンニンキガナイ'],
    ['この商品は若者に人気がない。', 'ワカモノニニンキガナイ'],
    ['その映画は東京では人気がない。', 'デワニンキガナイ'],
    ['この温泉は人気が絶えない。', 'ニンキガタエナイ'],
  ]);
});

test('後: ノチ between two weather words and as "later" starting a clause; アト before a verb', async () => {
  await readsAs([
    ['明日は晴れ後雨でしょう。', 'ハレノチアメ'],
    ['雪後曇りの予想です。', 'ユキノチクモリ'],
    ['週末は雨後晴れ。', 'アメノチハレ'],
    ['彼女は後に医者になった。', 'カノジョワノチニイシャ'],
    ['後に、この発見は高く評価された。', 'ノチニ、'],
  ]);
  await readsAs([
    ['大雨の後に虹が出た。', 'オーアメノアトニ'],
    ['彼は後に続いた。', 'アトニツズイタ'],
    ['東京を後にした。', 'ヲアトニシタ'],
    ['後になって気づいた。', 'アトニナッテ'],
    ['私は後に残ります。', 'ワアトニノコリマス'],
    ['その話は後に回そう。', 'ワアトニマワソ'],
    ['雨雲の後ろに晴れ間が見えた。', 'ウシロ'],
  ]);
});

test('一目: ヒトメ, a glance; イチモク in 一目置く', async () => {
  await readsAs([
    ['一目で彼女だとわかった。', 'ヒトメデ'],
    ['海を一目見たい。', 'ウミヲヒトメミタイ'],
  ]);
  await readsAs([
    ['師匠には一目置いている。', 'イチモクオイテ'],
    ['結果は一目瞭然だ。', 'イチモクリョーゼン'],
  ]);
});

test('今日: コンニチ in 今日では and 今日に至る; キョー otherwise', async () => {
  await readsAs([
    ['今日では誰でも使える。', 'コンニチデワ'],
    ['今日に至るまで続く伝統。', 'コンニチニイタル'],
  ]);
  await readsAs([
    ['今日は休みです。', 'キョーワ'],
    ['今日で最後の授業だ。', 'キョーデサイゴ'],
    ['今日の天気を調べた。', 'キョーノテンキ'],
  ]);
});

test('上手: ウワテ after a count of 枚 (一枚上手); ジョーズ otherwise', async () => {
  await readsAs([['交渉では相手が一枚上手だった。', 'イチマイウワテ']]);
  await readsAs([
    ['彼女は料理が上手だ。', 'ジョーズダ'],
    ['二枚の絵が上手に描けた。', 'エガジョーズニ'],
  ]);
});

test('入れる: ハイレル (can get in) with no object nor goal, ending its clause; イレル otherwise', async () => {
  await readsAs([
    ['満席だったが、やっと入れた。', 'ヤットハイレタ'],
    ['予約なしでも入れます。', 'ハイレマス'],
    ['会員だけが入れる。', 'ダケガハイレル'],
    ['混雑していたが、なんとか入れた。', 'ナントカハイレタ'],
  ]);
  await readsAs([
    ['砂糖を入れた。', 'ヲイレタ'],
    ['スイッチを入れます。', 'ヲイレマス'],
    ['お茶入れたよ。', 'オチャイレタ'],
    ['彼が入れたコーヒーはおいしい。', 'イレタコーヒー'],
    ['箱に入れた。', 'ハコニイレタ'],
    ['仲間に入れてください。', 'ニイレテ'],
    ['電源も入れた。', 'モイレタ'],
  ]);
});

test('町: チョー ending a town name in an address, before its number; IPADIC\'s reading elsewhere', async () => {
  await readsAs([
    ['横浜市中区伊勢佐木町一丁目', 'イセザキチョーイッチョーメ'],
    ['東京都中野区本町三丁目', 'ホンチョーサンチョーメ'],
    ['千代田区神田須田町1-2-3', 'スダチョーイチノニノサン'],
    ['東京都中央区日本橋人形町二丁目', 'ニンギョーチョーニチョーメ'],
    ['港区浜松町2丁目', 'ハママツチョーニチョーメ'],
  ]);
  await readsAs([
    ['横浜市中区元町一丁目', 'モトマチイッチョーメ'],
    ['東京都千代田区大手町一丁目', 'オーテマチ'],
    ['生まれた町に帰った。', 'マチニ'],
    ['横浜市の下町を歩いた。', 'シタマチ'],
    ['港区の町を歩く。', 'ノマチヲ'],
    ['町内会の回覧板。', 'チョーナイカイ'],
    ['神戸市中央区栄町通', 'サカエマチ'],
  ]);
});

test('a one-kanji suffix after a time adverb is a word of its own when its reading is native', async () => {
  await readsAs([
    ['今夜家で映画を見る。', 'コンヤイエデ'],
    ['日曜日家にいた。', 'ニチヨービイエニ'],
    ['明日車で迎えに行く。', 'アシタクルマデ'],
    ['今朝店の前で転んだ。', 'ケサミセノ'],
    ['週末人が多い。', 'シューマツヒトガ'],
    ['昨夜家に泥棒が入った。', 'サクヤイエニ'],
    ['来週車を買う予定だ。', 'ライシュークルマヲ'],
    ['先月店を閉めた。', 'センゲツミセヲ'],
    ['去年雨が少なかった。', 'キョネンアメガ'],
    ['夕方人が集まってきた。', 'ユーガタヒトガ'],
    ['毎日車で通勤している。', 'マイニチクルマデ'],
    ['毎日水を飲む。', 'マイニチミズヲ'],
  ]);
  // Compounds keep their Sino-Japanese suffix.
  await readsAs([
    ['夜間便で到着した。', 'ヤカンビンデ'],
    ['本日分の受付は終了しました。', 'ホンジツブンノ'],
    ['中国人の観光客が増えた。', 'チューゴクジンノ'],
    ['外国人の友人。', 'ガイコクジンノ'],
  ]);
});

test('米 alone is コメ; ベイ (said ベー) in compounds', async () => {
  await readsAs([
    ['スーパーで米を買ってきた。', 'デコメヲ'],
    ['米の値段が上がった。', 'コメノネダン'],
    ['新潟の米はおいしい。', 'ノコメワ'],
  ]);
  await readsAs([
    ['米大統領が来日した。', 'ベーダイトーリョー'],
    ['日米首脳会談が開かれた。', 'ニチベー'],
    ['米軍基地の問題。', 'ベーグン'],
    ['米政府が発表した。', 'ベーセーフ'],
  ]);
});

test('家 after a family name is ケ; カ in other compounds', async () => {
  await readsAs([
    ['山田家の長男。', 'ヤマダケノ'],
    ['高橋家の食卓。', 'タカハシケノ'],
  ]);
  await readsAs([
    ['小説家になりたい。', 'ショーセツカニ'],
    ['建築家の作品を見た。', 'ケンチクカノ'],
    ['画家を目指す。', 'ガカヲ'],
  ]);
});

test('角 alone is カド; カク in compounds', async () => {
  await readsAs([
    ['本棚の角に足をぶつけた。', 'ノカドニ'],
    ['交差点の角にパン屋がある。', 'ノカドニ'],
    ['道の角で待ち合わせた。', 'ミチノカドデ'],
  ]);
  await readsAs([
    ['角度を変える。', 'カクドヲ'],
    ['三角の形に切る。', 'サンカクノ'],
  ]);
});

test('間 after の or a modifier is アイダ; マ elsewhere', async () => {
  await readsAs([
    ['駅と駅の間に公園がある。', 'エキノアイダニ'],
    ['夏休みの間ずっと雨だった。', 'ナツヤスミノアイダ'],
    ['短い間でしたがお世話になりました。', 'ミジカイアイダ'],
    ['山と山の間に村がある。', 'ヤマノアイダニ'],
    ['長い間待たせてごめん。', 'ナガイアイダ'],
  ]);
  await readsAs([
    ['間がいい。', 'マガイイ'],
    ['なんとか間に合った。', 'マニアッタ'],
    ['間を置いて話す。', 'マヲオイテ'],
  ]);
});

test('上/下 after 右/左/斜め are ウエ/シタ; ジョー elsewhere', async () => {
  await readsAs([
    ['画面の右上の角を押す。', 'ミギウエノカドヲ'],
    ['右下に表示される。', 'ミギシタニ'],
    ['斜め上から撮影する。', 'ナナメウエカラ'],
  ]);
  await readsAs([
    ['ネット上の情報。', 'ネットジョーノ'],
    ['歴史上の人物。', 'レキシジョーノ'],
    ['机上の空論。', 'キジョーノ'],
  ]);
});

test('長押し is ナガオシ; 長押 alone is ナゲシ', async () => {
  await readsAs([
    ['電源ボタンを長押しして再起動する。', 'ナガオシシテ'],
    ['アイコンを長押しするとメニューが出る。', 'ナガオシスルト'],
  ]);
  await readsAs([['長押に帽子を掛けた。', 'ナゲシニ']]);
});

test('日 for Japan geminates before k and ch only', async () => {
  await readsAs([
    ['日中は半袖で過ごせる。', 'ニッチューワ'],
    ['日韓関係について話し合った。', 'ニッカン'],
    ['日中韓の首脳が集まった。', 'ニッチューカン'],
  ]);
  await readsAs([['日英の協力。', 'ニチエー']]);
});

test('exceptions: each word or phrase is read its one way, and each says why', async () => {
  await readsAs([
    ['その辺で待っていて。', 'ソノヘンデ'],
    ['夜中に地震があった。', 'ヨナカニ'],
    ['明後日から出張です。', 'アサッテカラ'],
    ['この間の旅行は楽しかった。', 'コノアイダノ'],
    ['家中の窓を開けた。', 'イエジューノ'],
    ['杜の都を訪ねた。', 'モリノミヤコ'],
    ['北の方に山が見える。', 'キタノホーニ'],
    ['街中を歩く。', 'マチナカヲ'],
    ['明朝、出発します。', 'ミョーチョー'],
    ['祖母の指輪は私の宝物だ。', 'タカラモノ'],
    ['急な腹痛で病院に行った。', 'フクツーデ'],
    ['三宮の駅で待ち合わせた。', 'サンノミヤノ'],
    ['京都市中京区の役所。', 'ナカギョークノ'],
    ['オーブンを予熱する。', 'ヨネツスル'],
    ['フライパンを予熱して油をひく。', 'ヨネツシテ'],
    ['雨で洗濯物が乾かない。', 'センタクモノガ'],
    ['父は下手の横好きで釣りを続けている。', 'ヨコズキデ'],
    ['梅雨前線が北上している。', 'バイウゼンセンガ'],
    ['今年初の雪が降った。', 'コトシハツノ'],
    ['大谷さんに電話した。', 'オータニサン'],
  ]);
  // Not the exceptions: a Sino-Japanese noun + 物 stays ブツ; 梅雨 alone and in 梅雨明け stays ツユ.
  await readsAs([
    ['工場の廃棄物を処理する。', 'ハイキブツヲ'],
    ['梅雨明けが発表された。', 'ツユアケガ'],
    ['今年初めに引っ越した。', 'コトシハジメニ'],
  ]);
  for (const e of EXCEPTIONS) {
    assert.equal(e.readings.length, e.surfaces.length, e.surfaces.join(''));
    assert.ok(e.why.length > 20, `${e.surfaces.join('')} says why it is an exception`);
  }
});

test('argumentBefore: the marked argument of a predicate within its clause', async () => {
  const tokenizer = await loadTokenizer();
  const at = (text: string, surface: string): ReturnType<typeof argumentBefore> => {
    const tokens = tokenizer.tokenize(text);
    return argumentBefore(tokens, tokens.findIndex((t) => t.surface_form === surface));
  };
  const shape = (a: ReturnType<typeof argumentBefore>): [string, string | undefined] | undefined => (a === undefined ? undefined : [a.particle, a.noun?.surface_form]);
  assert.deepEqual(shape(at('図書館は朝早くから開いている', '開い')), ['は', '図書館']);
  assert.deepEqual(shape(at('本を静かに開いた', '開い')), ['を', '本']);
  // A clause boundary (punctuation, て, another verb) hides the arguments before it.
  assert.equal(at('本を読んで、開いた', '開い'), undefined);
  assert.equal(at('本を読んで開いた', '開い'), undefined);
  assert.equal(at('開いた', '開い'), undefined);
});

test('contextReadings leaves IPADIC\'s reading wherever no rule applies', async () => {
  const tokenizer = await loadTokenizer();
  const tokens = tokenizer.tokenize('東京駅で友達と会って、一緒に昼ご飯を食べた。');
  assert.ok(contextReadings(tokens, (s) => tokenizer.tokenize(s)).every((r) => r === undefined));
});

test('word timings take the context reading: a word is timed as it is said', async () => {
  const tokenizer = await loadTokenizer();
  const text = '店が開いている。食事の後で一日中家にいた。';
  const readings = japaneseTokens(text, 0, text.length, tokenizer).map((t) => `${text.slice(t.start, t.end)}:${t.reading}`);
  for (const word of ['開い:アイ', '後:アト', '家:イエ']) assert.ok(readings.includes(word), `${word} in ${readings.join(' ')}`);
  assert.equal(
    japaneseTokens(text, 0, text.length, tokenizer)
      .map((t) => t.reading)
      .join(''),
    (await said(text)).replace(/[。、]/g, ''),
  );
});
