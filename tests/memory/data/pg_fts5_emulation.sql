-- @@ migration 3 fts_fold_as_unicode61 sha256 7fcf021b5bd5

    -- FTS5's unicode61 per character: its separators become spaces, its word
    -- characters are folded (Ä, ä -> a; É -> e; a combining acute dropped). ASCII
    -- letters are left to the dictionaries, which lower-case them under every ctype;
    -- a text without a character to fold skips the fold.
    CREATE OR REPLACE FUNCTION fts_text(value TEXT) RETURNS TEXT
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    DECLARE
        spaced TEXT := regexp_replace(value, '[\u0001-\u002f\u003a-\u0040\u005b-\u0060\u007b-\u00a9\u00ab-\u00b1\u00b4\u00b6-\u00b8\u00bb\u00bf\u00d7\u00f7\u02c2-\u02c5\u02d2-\u02df\u02e5-\u02eb\u02ed\u02ef-\u02ff\u0305\u030d-\u030e\u0310\u0312-\u031a\u031c-\u0322\u0329-\u032c\u032f\u0332-\u036f\u0375\u037e\u0384-\u0385\u0387\u03f6\u0482-\u0489\u055a-\u055f\u0589-\u058a\u058f\u0591-\u05c7\u05f3-\u05f4\u0600-\u0604\u0606-\u061b\u061e-\u061f\u064b-\u065f\u066a-\u066d\u0670\u06d4\u06d6-\u06e4\u06e7-\u06ed\u06fd-\u06fe\u0700-\u070d\u070f\u0711\u0730-\u074a\u07a6-\u07b0\u07eb-\u07f3\u07f6-\u07f9\u0816-\u0819\u081b-\u0823\u0825-\u0827\u0829-\u082d\u0830-\u083e\u0859-\u085b\u085e\u08e4-\u08fe\u0900-\u0903\u093a-\u093c\u093e-\u094f\u0951-\u0957\u0962-\u0965\u0970\u0981-\u0983\u09bc\u09be-\u09c4\u09c7-\u09c8\u09cb-\u09cd\u09d7\u09e2-\u09e3\u09f2-\u09f3\u09fa-\u09fb\u0a01-\u0a03\u0a3c\u0a3e-\u0a42\u0a47-\u0a48\u0a4b-\u0a4d\u0a51\u0a70-\u0a71\u0a75\u0a81-\u0a83\u0abc\u0abe-\u0ac5\u0ac7-\u0ac9\u0acb-\u0acd\u0ae2-\u0ae3\u0af0-\u0af1\u0b01-\u0b03\u0b3c\u0b3e-\u0b44\u0b47-\u0b48\u0b4b-\u0b4d\u0b56-\u0b57\u0b62-\u0b63\u0b70\u0b82\u0bbe-\u0bc2\u0bc6-\u0bc8\u0bca-\u0bcd\u0bd7\u0bf3-\u0bfa\u0c01-\u0c03\u0c3e-\u0c44\u0c46-\u0c48\u0c4a-\u0c4d\u0c55-\u0c56\u0c62-\u0c63\u0c7f\u0c82-\u0c83\u0cbc\u0cbe-\u0cc4\u0cc6-\u0cc8\u0cca-\u0ccd\u0cd5-\u0cd6\u0ce2-\u0ce3\u0d02-\u0d03\u0d3e-\u0d44\u0d46-\u0d48\u0d4a-\u0d4d\u0d57\u0d62-\u0d63\u0d79\u0d82-\u0d83\u0dca\u0dcf-\u0dd4\u0dd6\u0dd8-\u0ddf\u0df2-\u0df4\u0e31\u0e34-\u0e3a\u0e3f\u0e47-\u0e4f\u0e5a-\u0e5b\u0eb1\u0eb4-\u0eb9\u0ebb-\u0ebc\u0ec8-\u0ecd\u0f01-\u0f1f\u0f34-\u0f3f\u0f71-\u0f87\u0f8d-\u0f97\u0f99-\u0fbc\u0fbe-\u0fcc\u0fce-\u0fda\u102b-\u103e\u104a-\u104f\u1056-\u1059\u105e-\u1060\u1062-\u1064\u1067-\u106d\u1071-\u1074\u1082-\u108d\u108f\u109a-\u109f\u10fb\u135d-\u1368\u1390-\u1399\u1400\u166d-\u166e\u1680\u169b-\u169c\u16eb-\u16ed\u1712-\u1714\u1732-\u1736\u1752-\u1753\u1772-\u1773\u17b4-\u17d6\u17d8-\u17db\u17dd\u1800-\u180e\u18a9\u1920-\u192b\u1930-\u193b\u1940\u1944-\u1945\u19b0-\u19c0\u19c8-\u19c9\u19de-\u19ff\u1a17-\u1a1b\u1a1e-\u1a1f\u1a55-\u1a5e\u1a60-\u1a7c\u1a7f\u1aa0-\u1aa6\u1aa8-\u1aad\u1b00-\u1b04\u1b34-\u1b44\u1b5a-\u1b7c\u1b80-\u1b82\u1ba1-\u1bad\u1be6-\u1bf3\u1bfc-\u1bff\u1c24-\u1c37\u1c3b-\u1c3f\u1c7e-\u1c7f\u1cc0-\u1cc7\u1cd0-\u1ce8\u1ced\u1cf2-\u1cf4\u1dc0-\u1de6\u1dfc-\u1dff\u1fbd\u1fbf-\u1fc1\u1fcd-\u1fcf\u1fdd-\u1fdf\u1fed-\u1fef\u1ffd-\u1ffe\u2000-\u2064\u206a-\u206f\u207a-\u207e\u208a-\u208e\u20a0-\u20b9\u20d0-\u20f0\u2100-\u2101\u2103-\u2106\u2108-\u2109\u2114\u2116-\u2118\u211e-\u2123\u2125\u2127\u2129\u212e\u213a-\u213b\u2140-\u2144\u214a-\u214d\u214f\u2190-\u23f3\u2400-\u2426\u2440-\u244a\u249c-\u24e9\u2500-\u26ff\u2701-\u2775\u2794-\u2b4c\u2b50-\u2b59\u2ce5-\u2cea\u2cef-\u2cf1\u2cf9-\u2cfc\u2cfe-\u2cff\u2d70\u2d7f\u2de0-\u2e2e\u2e30-\u2e3b\u2e80-\u2e99\u2e9b-\u2ef3\u2f00-\u2fd5\u2ff0-\u2ffb\u3000-\u3004\u3008-\u3020\u302a-\u3030\u3036-\u3037\u303d-\u303f\u3099-\u309c\u30a0\u30fb\u3190-\u3191\u3196-\u319f\u31c0-\u31e3\u3200-\u321e\u322a-\u3247\u3250\u3260-\u327f\u328a-\u32b0\u32c0-\u32fe\u3300-\u33ff\u4dc0-\u4dff\ua490-\ua4c6\ua4fe-\ua4ff\ua60d-\ua60f\ua66f-\ua67e\ua69f\ua6f0-\ua6f7\ua700-\ua716\ua720-\ua721\ua789-\ua78a\ua802\ua806\ua80b\ua823-\ua82b\ua836-\ua839\ua874-\ua877\ua880-\ua881\ua8b4-\ua8c4\ua8ce-\ua8cf\ua8e0-\ua8f1\ua8f8-\ua8fa\ua926-\ua92f\ua947-\ua953\ua95f\ua980-\ua983\ua9b3-\ua9cd\ua9de-\ua9df\uaa29-\uaa36\uaa43\uaa4c-\uaa4d\uaa5c-\uaa5f\uaa77-\uaa79\uaa7b\uaab0\uaab2-\uaab4\uaab7-\uaab8\uaabe-\uaabf\uaac1\uaade-\uaadf\uaaeb-\uaaf1\uaaf5-\uaaf6\uabe3-\uabed\ufb1e\ufb29\ufbb2-\ufbc1\ufd3e-\ufd3f\ufdfc-\ufdfd\ufe00-\ufe19\ufe20-\ufe26\ufe30-\ufe52\ufe54-\ufe66\ufe68-\ufe6b\ufeff\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65\uffe0-\uffe6\uffe8-\uffee\ufff9-\uffff\U00010100-\U00010102\U00010137-\U0001013f\U00010179-\U00010189\U00010190-\U0001019b\U000101d0-\U000101fd\U0001039f\U000103d0\U00010857\U0001091f\U0001093f\U00010a01-\U00010a03\U00010a05-\U00010a06\U00010a0c-\U00010a0f\U00010a38-\U00010a3a\U00010a3f\U00010a50-\U00010a58\U00010a7f\U00010b39-\U00010b3f\U00011000-\U00011002\U00011038-\U0001104d\U00011080-\U00011082\U000110b0-\U000110c1\U00011100-\U00011102\U00011127-\U00011134\U00011140-\U00011143\U00011180-\U00011182\U000111b3-\U000111c0\U000111c5-\U000111c8\U000116ab-\U000116b7\U00012470-\U00012473\U00016f51-\U00016f7e\U00016f8f-\U00016f92\U0001d000-\U0001d0f5\U0001d100-\U0001d126\U0001d129-\U0001d1dd\U0001d200-\U0001d245\U0001d300-\U0001d356\U0001d6c1\U0001d6db\U0001d6fb\U0001d715\U0001d735\U0001d74f\U0001d76f\U0001d789\U0001d7a9\U0001d7c3\U0001eef0-\U0001eef1\U0001f000-\U0001f02b\U0001f030-\U0001f093\U0001f0a0-\U0001f0ae\U0001f0b1-\U0001f0be\U0001f0c1-\U0001f0cf\U0001f0d1-\U0001f0df\U0001f110-\U0001f12e\U0001f130-\U0001f16b\U0001f170-\U0001f19a\U0001f1e6-\U0001f202\U0001f210-\U0001f23a\U0001f240-\U0001f248\U0001f250-\U0001f251\U0001f300-\U0001f320\U0001f330-\U0001f335\U0001f337-\U0001f37c\U0001f380-\U0001f393\U0001f3a0-\U0001f3c4\U0001f3c6-\U0001f3ca\U0001f3e0-\U0001f3f0\U0001f400-\U0001f43e\U0001f440\U0001f442-\U0001f4f7\U0001f4f9-\U0001f4fc\U0001f500-\U0001f53d\U0001f540-\U0001f543\U0001f550-\U0001f567\U0001f5fb-\U0001f640\U0001f645-\U0001f64f\U0001f680-\U0001f6c5\U0001f700-\U0001f773\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef]+', ' ', 'g');
    BEGIN
        IF spaced !~ '[\u00b5\u00c0-\u00d6\u00d8-\u00de\u00e0-\u00e5\u00e7-\u00ef\u00f1-\u00f6\u00f9-\u00fd\u00ff-\u0110\u0112-\u0126\u0128-\u0130\u0132\u0134-\u0137\u0139-\u013f\u0141\u0143-\u0148\u014a\u014c-\u0152\u0154-\u0166\u0168-\u017f\u0181-\u0182\u0184\u0186-\u0187\u0189-\u018b\u018e-\u0191\u0193-\u0194\u0196-\u0198\u019c-\u019d\u019f-\u01a2\u01a4\u01a6-\u01a7\u01a9\u01ac\u01ae-\u01b3\u01b5\u01b7-\u01b8\u01bc\u01c4-\u01c5\u01c7-\u01c8\u01ca-\u01cb\u01cd-\u01d5\u01d7\u01d9\u01db\u01de\u01e0\u01e2\u01e4\u01e6-\u01ec\u01ee\u01f0-\u01f2\u01f4-\u01fa\u01fc\u01fe\u0200-\u021c\u021e-\u0220\u0222\u0224\u0226-\u022a\u022c\u022e-\u0230\u0232-\u0233\u023a-\u023b\u023d-\u023e\u0241\u0243-\u0246\u0248\u024a\u024c\u024e\u0300-\u0304\u0306-\u030c\u030f\u0311\u031b\u0323-\u0328\u032d-\u032e\u0330-\u0331\u0370\u0372\u0376\u0386\u0388-\u038a\u038c\u038e-\u038f\u0391-\u03a1\u03a3-\u03ab\u03c2\u03cf-\u03d1\u03d5-\u03d6\u03d8\u03da\u03dc\u03de\u03e0\u03e2\u03e4\u03e6\u03e8\u03ea\u03ec\u03ee\u03f0-\u03f1\u03f4-\u03f5\u03f7\u03f9-\u03fa\u03fd-\u042f\u0460\u0462\u0464\u0466\u0468\u046a\u046c\u046e\u0470\u0472\u0474\u0476\u0478\u047a\u047c\u047e\u0480\u048a\u048c\u048e\u0490\u0492\u0494\u0496\u0498\u049a\u049c\u049e\u04a0\u04a2\u04a4\u04a6\u04a8\u04aa\u04ac\u04ae\u04b0\u04b2\u04b4\u04b6\u04b8\u04ba\u04bc\u04be\u04c0-\u04c1\u04c3\u04c5\u04c7\u04c9\u04cb\u04cd\u04d0\u04d2\u04d4\u04d6\u04d8\u04da\u04dc\u04de\u04e0\u04e2\u04e4\u04e6\u04e8\u04ea\u04ec\u04ee\u04f0\u04f2\u04f4\u04f6\u04f8\u04fa\u04fc\u04fe\u0500\u0502\u0504\u0506\u0508\u050a\u050c\u050e\u0510\u0512\u0514\u0516\u0518\u051a\u051c\u051e\u0520\u0522\u0524\u0526\u0531-\u0556\u10a0-\u10c5\u10c7\u10cd\u1e00-\u1e08\u1e0a-\u1e14\u1e16\u1e18-\u1e1c\u1e1e-\u1e2e\u1e30-\u1e38\u1e3a-\u1e4c\u1e4e\u1e50\u1e52\u1e54-\u1e5c\u1e5e-\u1e64\u1e66\u1e68\u1e6a-\u1e78\u1e7a\u1e7c-\u1e99\u1e9b\u1e9e\u1ea0-\u1ea4\u1ea6\u1ea8\u1eaa\u1eac\u1eae\u1eb0\u1eb2\u1eb4\u1eb6\u1eb8-\u1ebe\u1ec0\u1ec2\u1ec4\u1ec6\u1ec8-\u1ed0\u1ed2\u1ed4\u1ed6\u1ed8\u1eda\u1edc\u1ede\u1ee0\u1ee2\u1ee4-\u1ee8\u1eea\u1eec\u1eee\u1ef0\u1ef2-\u1efa\u1efc\u1efe\u1f08-\u1f0f\u1f18-\u1f1d\u1f28-\u1f2f\u1f38-\u1f3f\u1f48-\u1f4d\u1f59\u1f5b\u1f5d\u1f5f\u1f68-\u1f6f\u1f88-\u1f8f\u1f98-\u1f9f\u1fa8-\u1faf\u1fb8-\u1fbc\u1fbe\u1fc8-\u1fcc\u1fd8-\u1fdb\u1fe8-\u1fec\u1ff8-\u1ffc\u2126\u212a-\u212b\u2132\u2160-\u216f\u2183\u2c00-\u2c2e\u2c60\u2c62-\u2c64\u2c67\u2c69\u2c6b\u2c6d-\u2c70\u2c72\u2c75\u2c7e-\u2c80\u2c82\u2c84\u2c86\u2c88\u2c8a\u2c8c\u2c8e\u2c90\u2c92\u2c94\u2c96\u2c98\u2c9a\u2c9c\u2c9e\u2ca0\u2ca2\u2ca4\u2ca6\u2ca8\u2caa\u2cac\u2cae\u2cb0\u2cb2\u2cb4\u2cb6\u2cb8\u2cba\u2cbc\u2cbe\u2cc0\u2cc2\u2cc4\u2cc6\u2cc8\u2cca\u2ccc\u2cce\u2cd0\u2cd2\u2cd4\u2cd6\u2cd8\u2cda\u2cdc\u2cde\u2ce0\u2ce2\u2ceb\u2ced\u2cf2\ua640\ua642\ua644\ua646\ua648\ua64a\ua64c\ua64e\ua650\ua652\ua654\ua656\ua658\ua65a\ua65c\ua65e\ua660\ua662\ua664\ua666\ua668\ua66a\ua66c\ua680\ua682\ua684\ua686\ua688\ua68a\ua68c\ua68e\ua690\ua692\ua694\ua696\ua722\ua724\ua726\ua728\ua72a\ua72c\ua72e\ua732\ua734\ua736\ua738\ua73a\ua73c\ua73e\ua740\ua742\ua744\ua746\ua748\ua74a\ua74c\ua74e\ua750\ua752\ua754\ua756\ua758\ua75a\ua75c\ua75e\ua760\ua762\ua764\ua766\ua768\ua76a\ua76c\ua76e\ua779\ua77b\ua77d-\ua77e\ua780\ua782\ua784\ua786\ua78b\ua78d\ua790\ua792\ua7a0\ua7a2\ua7a4\ua7a6\ua7a8\ua7aa\uff21-\uff3a\U00010400-\U00010427]' THEN
            RETURN spaced;
        END IF;
        RETURN (SELECT string_agg(COALESCE(translate(x.m[1], 'ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞàáâãäåçèéêëìíîïñòóôõöùúûüýÿĀāĂăĄąĆćĈĉĊċČčĎďĐĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĦĨĩĪīĬĭĮįİĲĴĵĶķĹĺĻļĽľĿŁŃńŅņŇňŊŌōŎŏŐőŒŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŦŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽžſЀЁЂЃЄЅІЇЈЉЊЋЌЍЎЏАБВГДЕЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯѠѢѤѦѨѪѬѮѰѲѴѶѸѺѼѾҀҊҌҎҐҒҔҖҘҚҜҞҠҢҤҦҨҪҬҮҰҲҴҶҸҺҼҾӀӁӃӅӇӉӋӍӐӒӔӖӘӚӜӞӠӢӤӦӨӪӬӮӰӲӴӶӸӺӼӾͰͲͶΆΈΉΊΌΎΏΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩΪΫςϏϐϑϕϖϘϚϜϞϠϢϤϦϨϪϬϮϰϱϴϵϷϹϺϽϾϿµƁƂƄƆƇƉƊƋƎƏƐƑƓƔƖƗƘƜƝƟƠơƢƤƦƧƩƬƮƯưƱƲƳƵƷƸƼǄǅǇǈǊǋǍǎǏǐǑǒǓǔǕǗǙǛǞǠǢǤǦǧǨǩǪǫǬǮǰǱǲǴǵǶǷǸǹǺǼǾȀȁȂȃȄȅȆȇȈȉȊȋȌȍȎȏȐȑȒȓȔȕȖȗȘșȚțȜȞȟȠȢȤȦȧȨȩȪȬȮȯȰȲȳȺȻȽȾɁɃɄɅɆɈɊɌɎԀԂԄԆԈԊԌԎԐԒԔԖԘԚԜԞԠԢԤԦԱԲԳԴԵԶԷԸԹԺԻԼԽԾԿՀՁՂՃՄՅՆՇՈՉՊՋՌՍՎՏՐՑՒՓՔՕՖႠႡႢႣႤႥႦႧႨႩႪႫႬႭႮႯႰႱႲႳႴႵႶႷႸႹႺႻႼႽႾႿჀჁჂჃჄჅჇჍḀḁḂḃḄḅḆḇḈḊḋḌḍḎḏḐḑḒḓḔḖḘḙḚḛḜḞḟḠḡḢḣḤḥḦḧḨḩḪḫḬḭḮḰḱḲḳḴḵḶḷḸḺḻḼḽḾḿṀṁṂṃṄṅṆṇṈṉṊṋṌṎṐṒṔṕṖṗṘṙṚṛṜṞṟṠṡṢṣṤṦṨṪṫṬṭṮṯṰṱṲṳṴṵṶṷṸṺṼṽṾṿẀẁẂẃẄẅẆẇẈẉẊẋẌẍẎẏẐẑẒẓẔẕẖẗẘẙẛẞẠạẢảẤẦẨẪẬẮẰẲẴẶẸẹẺẻẼẽẾỀỂỄỆỈỉỊịỌọỎỏỐỒỔỖỘỚỜỞỠỢỤụỦủỨỪỬỮỰỲỳỴỵỶỷỸỹỺỼỾἈἉἊἋἌἍἎἏἘἙἚἛἜἝἨἩἪἫἬἭἮἯἸἹἺἻἼἽἾἿὈὉὊὋὌὍὙὛὝὟὨὩὪὫὬὭὮὯᾈᾉᾊᾋᾌᾍᾎᾏᾘᾙᾚᾛᾜᾝᾞᾟᾨᾩᾪᾫᾬᾭᾮᾯᾸᾹᾺΆᾼιῈΈῊΉῌῘῙῚΊῨῩῪΎῬῸΌῺΏῼΩKÅℲⅠⅡⅢⅣⅤⅥⅦⅧⅨⅩⅪⅫⅬⅭⅮⅯↃⰀⰁⰂⰃⰄⰅⰆⰇⰈⰉⰊⰋⰌⰍⰎⰏⰐⰑⰒⰓⰔⰕⰖⰗⰘⰙⰚⰛⰜⰝⰞⰟⰠⰡⰢⰣⰤⰥⰦⰧⰨⰩⰪⰫⰬⰭⰮⱠⱢⱣⱤⱧⱩⱫⱭⱮⱯⱰⱲⱵⱾⱿⲀⲂⲄⲆⲈⲊⲌⲎⲐⲒⲔⲖⲘⲚⲜⲞⲠⲢⲤⲦⲨⲪⲬⲮⲰⲲⲴⲶⲸⲺⲼⲾⳀⳂⳄⳆⳈⳊⳌⳎⳐⳒⳔⳖⳘⳚⳜⳞⳠⳢⳫⳭⳲꙀꙂꙄꙆꙈꙊꙌꙎꙐꙒꙔꙖꙘꙚꙜꙞꙠꙢꙤꙦꙨꙪꙬꚀꚂꚄꚆꚈꚊꚌꚎꚐꚒꚔꚖꜢꜤꜦꜨꜪꜬꜮꜲꜴꜶꜸꜺꜼꜾꝀꝂꝄꝆꝈꝊꝌꝎꝐꝒꝔꝖꝘꝚꝜꝞꝠꝢꝤꝦꝨꝪꝬꝮꝹꝻꝽꝾꞀꞂꞄꞆꞋꞍꞐꞒꞠꞢꞤꞦꞨꞪＡＢＣＤＥＦＧＨＩＪＫＬＭＮＯＰＱＲＳＴＵＶＷＸＹＺ𐐀𐐁𐐂𐐃𐐄𐐅𐐆𐐇𐐈𐐉𐐊𐐋𐐌𐐍𐐎𐐏𐐐𐐑𐐒𐐓𐐔𐐕𐐖𐐗𐐘𐐙𐐚𐐛𐐜𐐝𐐞𐐟𐐠𐐡𐐢𐐣𐐤𐐥𐐦𐐧̧̨̛̣̤̥̦̭̮̰̱̀́̂̃̄̆̇̈̉̊̋̌̏̑', 'aaaaaaæceeeeiiiiðnoooooøuuuuyþaaaaaaceeeeiiiinooooouuuuyyaaaaaaccccccccddđeeeeeeeeeegggggggghhħiiiiiiiiiĳjjkkllllllŀłnnnnnnŋooooooœrrrrrrssssssssttttŧuuuuuuuuuuuuwwyyyzzzzzzsѐёђѓєѕіїјљњћќѝўџабвгдежзийклмнопрстуфхцчшщъыьэюяѡѣѥѧѩѫѭѯѱѳѵѷѹѻѽѿҁҋҍҏґғҕҗҙқҝҟҡңҥҧҩҫҭүұҳҵҷҹһҽҿӏӂӄӆӈӊӌӎӑӓӕӗәӛӝӟӡӣӥӧөӫӭӯӱӳӵӷӹӻӽӿͱͳͷάέήίόύώαβγδεζηθικλμνξοπρστυφχψωϊϋσϗβθφπϙϛϝϟϡϣϥϧϩϫϭϯκρθεϸϲϻͻͼͽμɓƃƅɔƈɖɗƌǝəɛƒɠɣɩɨƙɯɲɵooƣƥʀƨʃƭʈuuʊʋƴƶʒƹƽǆǆǉǉǌǌaaiioouuǖǘǚǜǟǡǣǥggkkooǭǯjǳǳggƕƿnnǻǽǿaaaaeeeeiiiioooorrrruuuussttȝhhƞȣȥaaeeȫȭooȱyyⱥȼƚⱦɂƀʉʌɇɉɋɍɏԁԃԅԇԉԋԍԏԑԓԕԗԙԛԝԟԡԣԥԧաբգդեզէըթժիլխծկհձղճմյնշոչպջռսվտրցւփքօֆⴀⴁⴂⴃⴄⴅⴆⴇⴈⴉⴊⴋⴌⴍⴎⴏⴐⴑⴒⴓⴔⴕⴖⴗⴘⴙⴚⴛⴜⴝⴞⴟⴠⴡⴢⴣⴤⴥⴧⴭaabbbbbbḉddddddddddḕḗeeeeḝffgghhhhhhhhhhiiḯkkkkkkllḹllllmmmmmmnnnnnnnnṍṏṑṓpppprrrrṝrrssssṥṧṩttttttttuuuuuuṹṻvvvvwwwwwwwwwwxxxxyyzzzzzzhtwysßaaaaấầẩẫậắằẳẵặeeeeeeếềểễệiiiiooooốồổỗộớờởỡợuuuuứừửữựyyyyyyyyỻỽỿἀἁἂἃἄἅἆἇἐἑἒἓἔἕἠἡἢἣἤἥἦἧἰἱἲἳἴἵἶἷὀὁὂὃὄὅὑὓὕὗὠὡὢὣὤὥὦὧᾀᾁᾂᾃᾄᾅᾆᾇᾐᾑᾒᾓᾔᾕᾖᾗᾠᾡᾢᾣᾤᾥᾦᾧᾰᾱὰάᾳιὲέὴήῃῐῑὶίῠῡὺύῥὸόὼώῳωkaⅎⅰⅱⅲⅳⅴⅵⅶⅷⅸⅹⅺⅻⅼⅽⅾⅿↄⰰⰱⰲⰳⰴⰵⰶⰷⰸⰹⰺⰻⰼⰽⰾⰿⱀⱁⱂⱃⱄⱅⱆⱇⱈⱉⱊⱋⱌⱍⱎⱏⱐⱑⱒⱓⱔⱕⱖⱗⱘⱙⱚⱛⱜⱝⱞⱡɫᵽɽⱨⱪⱬɑɱɐɒⱳⱶȿɀⲁⲃⲅⲇⲉⲋⲍⲏⲑⲓⲕⲗⲙⲛⲝⲟⲡⲣⲥⲧⲩⲫⲭⲯⲱⲳⲵⲷⲹⲻⲽⲿⳁⳃⳅⳇⳉⳋⳍⳏⳑⳓⳕⳗⳙⳛⳝⳟⳡⳣⳬⳮⳳꙁꙃꙅꙇꙉꙋꙍꙏꙑꙓꙕꙗꙙꙛꙝꙟꙡꙣꙥꙧꙩꙫꙭꚁꚃꚅꚇꚉꚋꚍꚏꚑꚓꚕꚗꜣꜥꜧꜩꜫꜭꜯꜳꜵꜷꜹꜻꜽꜿꝁꝃꝅꝇꝉꝋꝍꝏꝑꝓꝕꝗꝙꝛꝝꝟꝡꝣꝥꝧꝩꝫꝭꝯꝺꝼᵹꝿꞁꞃꞅꞇꞌɥꞑꞓꞡꞣꞥꞧꞩɦａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐｑｒｓｔｕｖｗｘｙｚ𐐨𐐩𐐪𐐫𐐬𐐭𐐮𐐯𐐰𐐱𐐲𐐳𐐴𐐵𐐶𐐷𐐸𐐹𐐺𐐻𐐼𐐽𐐾𐐿𐑀𐑁𐑂𐑃𐑄𐑅𐑆𐑇𐑈𐑉𐑊𐑋𐑌𐑍𐑎𐑏'),
                                           x.m[2]), '' ORDER BY x.n)
                FROM regexp_matches(spaced, '([\u00b5\u00c0-\u00d6\u00d8-\u00de\u00e0-\u00e5\u00e7-\u00ef\u00f1-\u00f6\u00f9-\u00fd\u00ff-\u0110\u0112-\u0126\u0128-\u0130\u0132\u0134-\u0137\u0139-\u013f\u0141\u0143-\u0148\u014a\u014c-\u0152\u0154-\u0166\u0168-\u017f\u0181-\u0182\u0184\u0186-\u0187\u0189-\u018b\u018e-\u0191\u0193-\u0194\u0196-\u0198\u019c-\u019d\u019f-\u01a2\u01a4\u01a6-\u01a7\u01a9\u01ac\u01ae-\u01b3\u01b5\u01b7-\u01b8\u01bc\u01c4-\u01c5\u01c7-\u01c8\u01ca-\u01cb\u01cd-\u01d5\u01d7\u01d9\u01db\u01de\u01e0\u01e2\u01e4\u01e6-\u01ec\u01ee\u01f0-\u01f2\u01f4-\u01fa\u01fc\u01fe\u0200-\u021c\u021e-\u0220\u0222\u0224\u0226-\u022a\u022c\u022e-\u0230\u0232-\u0233\u023a-\u023b\u023d-\u023e\u0241\u0243-\u0246\u0248\u024a\u024c\u024e\u0300-\u0304\u0306-\u030c\u030f\u0311\u031b\u0323-\u0328\u032d-\u032e\u0330-\u0331\u0370\u0372\u0376\u0386\u0388-\u038a\u038c\u038e-\u038f\u0391-\u03a1\u03a3-\u03ab\u03c2\u03cf-\u03d1\u03d5-\u03d6\u03d8\u03da\u03dc\u03de\u03e0\u03e2\u03e4\u03e6\u03e8\u03ea\u03ec\u03ee\u03f0-\u03f1\u03f4-\u03f5\u03f7\u03f9-\u03fa\u03fd-\u042f\u0460\u0462\u0464\u0466\u0468\u046a\u046c\u046e\u0470\u0472\u0474\u0476\u0478\u047a\u047c\u047e\u0480\u048a\u048c\u048e\u0490\u0492\u0494\u0496\u0498\u049a\u049c\u049e\u04a0\u04a2\u04a4\u04a6\u04a8\u04aa\u04ac\u04ae\u04b0\u04b2\u04b4\u04b6\u04b8\u04ba\u04bc\u04be\u04c0-\u04c1\u04c3\u04c5\u04c7\u04c9\u04cb\u04cd\u04d0\u04d2\u04d4\u04d6\u04d8\u04da\u04dc\u04de\u04e0\u04e2\u04e4\u04e6\u04e8\u04ea\u04ec\u04ee\u04f0\u04f2\u04f4\u04f6\u04f8\u04fa\u04fc\u04fe\u0500\u0502\u0504\u0506\u0508\u050a\u050c\u050e\u0510\u0512\u0514\u0516\u0518\u051a\u051c\u051e\u0520\u0522\u0524\u0526\u0531-\u0556\u10a0-\u10c5\u10c7\u10cd\u1e00-\u1e08\u1e0a-\u1e14\u1e16\u1e18-\u1e1c\u1e1e-\u1e2e\u1e30-\u1e38\u1e3a-\u1e4c\u1e4e\u1e50\u1e52\u1e54-\u1e5c\u1e5e-\u1e64\u1e66\u1e68\u1e6a-\u1e78\u1e7a\u1e7c-\u1e99\u1e9b\u1e9e\u1ea0-\u1ea4\u1ea6\u1ea8\u1eaa\u1eac\u1eae\u1eb0\u1eb2\u1eb4\u1eb6\u1eb8-\u1ebe\u1ec0\u1ec2\u1ec4\u1ec6\u1ec8-\u1ed0\u1ed2\u1ed4\u1ed6\u1ed8\u1eda\u1edc\u1ede\u1ee0\u1ee2\u1ee4-\u1ee8\u1eea\u1eec\u1eee\u1ef0\u1ef2-\u1efa\u1efc\u1efe\u1f08-\u1f0f\u1f18-\u1f1d\u1f28-\u1f2f\u1f38-\u1f3f\u1f48-\u1f4d\u1f59\u1f5b\u1f5d\u1f5f\u1f68-\u1f6f\u1f88-\u1f8f\u1f98-\u1f9f\u1fa8-\u1faf\u1fb8-\u1fbc\u1fbe\u1fc8-\u1fcc\u1fd8-\u1fdb\u1fe8-\u1fec\u1ff8-\u1ffc\u2126\u212a-\u212b\u2132\u2160-\u216f\u2183\u2c00-\u2c2e\u2c60\u2c62-\u2c64\u2c67\u2c69\u2c6b\u2c6d-\u2c70\u2c72\u2c75\u2c7e-\u2c80\u2c82\u2c84\u2c86\u2c88\u2c8a\u2c8c\u2c8e\u2c90\u2c92\u2c94\u2c96\u2c98\u2c9a\u2c9c\u2c9e\u2ca0\u2ca2\u2ca4\u2ca6\u2ca8\u2caa\u2cac\u2cae\u2cb0\u2cb2\u2cb4\u2cb6\u2cb8\u2cba\u2cbc\u2cbe\u2cc0\u2cc2\u2cc4\u2cc6\u2cc8\u2cca\u2ccc\u2cce\u2cd0\u2cd2\u2cd4\u2cd6\u2cd8\u2cda\u2cdc\u2cde\u2ce0\u2ce2\u2ceb\u2ced\u2cf2\ua640\ua642\ua644\ua646\ua648\ua64a\ua64c\ua64e\ua650\ua652\ua654\ua656\ua658\ua65a\ua65c\ua65e\ua660\ua662\ua664\ua666\ua668\ua66a\ua66c\ua680\ua682\ua684\ua686\ua688\ua68a\ua68c\ua68e\ua690\ua692\ua694\ua696\ua722\ua724\ua726\ua728\ua72a\ua72c\ua72e\ua732\ua734\ua736\ua738\ua73a\ua73c\ua73e\ua740\ua742\ua744\ua746\ua748\ua74a\ua74c\ua74e\ua750\ua752\ua754\ua756\ua758\ua75a\ua75c\ua75e\ua760\ua762\ua764\ua766\ua768\ua76a\ua76c\ua76e\ua779\ua77b\ua77d-\ua77e\ua780\ua782\ua784\ua786\ua78b\ua78d\ua790\ua792\ua7a0\ua7a2\ua7a4\ua7a6\ua7a8\ua7aa\uff21-\uff3a\U00010400-\U00010427]+)|([^\u00b5\u00c0-\u00d6\u00d8-\u00de\u00e0-\u00e5\u00e7-\u00ef\u00f1-\u00f6\u00f9-\u00fd\u00ff-\u0110\u0112-\u0126\u0128-\u0130\u0132\u0134-\u0137\u0139-\u013f\u0141\u0143-\u0148\u014a\u014c-\u0152\u0154-\u0166\u0168-\u017f\u0181-\u0182\u0184\u0186-\u0187\u0189-\u018b\u018e-\u0191\u0193-\u0194\u0196-\u0198\u019c-\u019d\u019f-\u01a2\u01a4\u01a6-\u01a7\u01a9\u01ac\u01ae-\u01b3\u01b5\u01b7-\u01b8\u01bc\u01c4-\u01c5\u01c7-\u01c8\u01ca-\u01cb\u01cd-\u01d5\u01d7\u01d9\u01db\u01de\u01e0\u01e2\u01e4\u01e6-\u01ec\u01ee\u01f0-\u01f2\u01f4-\u01fa\u01fc\u01fe\u0200-\u021c\u021e-\u0220\u0222\u0224\u0226-\u022a\u022c\u022e-\u0230\u0232-\u0233\u023a-\u023b\u023d-\u023e\u0241\u0243-\u0246\u0248\u024a\u024c\u024e\u0300-\u0304\u0306-\u030c\u030f\u0311\u031b\u0323-\u0328\u032d-\u032e\u0330-\u0331\u0370\u0372\u0376\u0386\u0388-\u038a\u038c\u038e-\u038f\u0391-\u03a1\u03a3-\u03ab\u03c2\u03cf-\u03d1\u03d5-\u03d6\u03d8\u03da\u03dc\u03de\u03e0\u03e2\u03e4\u03e6\u03e8\u03ea\u03ec\u03ee\u03f0-\u03f1\u03f4-\u03f5\u03f7\u03f9-\u03fa\u03fd-\u042f\u0460\u0462\u0464\u0466\u0468\u046a\u046c\u046e\u0470\u0472\u0474\u0476\u0478\u047a\u047c\u047e\u0480\u048a\u048c\u048e\u0490\u0492\u0494\u0496\u0498\u049a\u049c\u049e\u04a0\u04a2\u04a4\u04a6\u04a8\u04aa\u04ac\u04ae\u04b0\u04b2\u04b4\u04b6\u04b8\u04ba\u04bc\u04be\u04c0-\u04c1\u04c3\u04c5\u04c7\u04c9\u04cb\u04cd\u04d0\u04d2\u04d4\u04d6\u04d8\u04da\u04dc\u04de\u04e0\u04e2\u04e4\u04e6\u04e8\u04ea\u04ec\u04ee\u04f0\u04f2\u04f4\u04f6\u04f8\u04fa\u04fc\u04fe\u0500\u0502\u0504\u0506\u0508\u050a\u050c\u050e\u0510\u0512\u0514\u0516\u0518\u051a\u051c\u051e\u0520\u0522\u0524\u0526\u0531-\u0556\u10a0-\u10c5\u10c7\u10cd\u1e00-\u1e08\u1e0a-\u1e14\u1e16\u1e18-\u1e1c\u1e1e-\u1e2e\u1e30-\u1e38\u1e3a-\u1e4c\u1e4e\u1e50\u1e52\u1e54-\u1e5c\u1e5e-\u1e64\u1e66\u1e68\u1e6a-\u1e78\u1e7a\u1e7c-\u1e99\u1e9b\u1e9e\u1ea0-\u1ea4\u1ea6\u1ea8\u1eaa\u1eac\u1eae\u1eb0\u1eb2\u1eb4\u1eb6\u1eb8-\u1ebe\u1ec0\u1ec2\u1ec4\u1ec6\u1ec8-\u1ed0\u1ed2\u1ed4\u1ed6\u1ed8\u1eda\u1edc\u1ede\u1ee0\u1ee2\u1ee4-\u1ee8\u1eea\u1eec\u1eee\u1ef0\u1ef2-\u1efa\u1efc\u1efe\u1f08-\u1f0f\u1f18-\u1f1d\u1f28-\u1f2f\u1f38-\u1f3f\u1f48-\u1f4d\u1f59\u1f5b\u1f5d\u1f5f\u1f68-\u1f6f\u1f88-\u1f8f\u1f98-\u1f9f\u1fa8-\u1faf\u1fb8-\u1fbc\u1fbe\u1fc8-\u1fcc\u1fd8-\u1fdb\u1fe8-\u1fec\u1ff8-\u1ffc\u2126\u212a-\u212b\u2132\u2160-\u216f\u2183\u2c00-\u2c2e\u2c60\u2c62-\u2c64\u2c67\u2c69\u2c6b\u2c6d-\u2c70\u2c72\u2c75\u2c7e-\u2c80\u2c82\u2c84\u2c86\u2c88\u2c8a\u2c8c\u2c8e\u2c90\u2c92\u2c94\u2c96\u2c98\u2c9a\u2c9c\u2c9e\u2ca0\u2ca2\u2ca4\u2ca6\u2ca8\u2caa\u2cac\u2cae\u2cb0\u2cb2\u2cb4\u2cb6\u2cb8\u2cba\u2cbc\u2cbe\u2cc0\u2cc2\u2cc4\u2cc6\u2cc8\u2cca\u2ccc\u2cce\u2cd0\u2cd2\u2cd4\u2cd6\u2cd8\u2cda\u2cdc\u2cde\u2ce0\u2ce2\u2ceb\u2ced\u2cf2\ua640\ua642\ua644\ua646\ua648\ua64a\ua64c\ua64e\ua650\ua652\ua654\ua656\ua658\ua65a\ua65c\ua65e\ua660\ua662\ua664\ua666\ua668\ua66a\ua66c\ua680\ua682\ua684\ua686\ua688\ua68a\ua68c\ua68e\ua690\ua692\ua694\ua696\ua722\ua724\ua726\ua728\ua72a\ua72c\ua72e\ua732\ua734\ua736\ua738\ua73a\ua73c\ua73e\ua740\ua742\ua744\ua746\ua748\ua74a\ua74c\ua74e\ua750\ua752\ua754\ua756\ua758\ua75a\ua75c\ua75e\ua760\ua762\ua764\ua766\ua768\ua76a\ua76c\ua76e\ua779\ua77b\ua77d-\ua77e\ua780\ua782\ua784\ua786\ua78b\ua78d\ua790\ua792\ua7a0\ua7a2\ua7a4\ua7a6\ua7a8\ua7aa\uff21-\uff3a\U00010400-\U00010427]+)', 'g')
                     WITH ORDINALITY AS x(m, n));
    END $fn$;

    ALTER TABLE records DISABLE TRIGGER records_fts_sync;
    UPDATE records SET fts = to_tsvector('wardian_fts', fts_text(text))
                             || to_tsvector('wardian_fts', fts_text(evidence))
        WHERE text || evidence ~ '[^[:space:]\x20-\x7e]';
    UPDATE records SET doclen = (SELECT COALESCE(sum(cardinality(positions)), 0)
                                 FROM unnest(fts))
        WHERE text || evidence ~ '[^[:space:]\x20-\x7e]';
    ALTER TABLE records ENABLE TRIGGER records_fts_sync;
    
-- @@ migration 5 fts_stem_as_fts5 sha256 793c0b49570c

    -- A word's consonant/vowel pattern as FTS5 reads it: a e i o u are vowels, y is a
    -- vowel after a consonant (not first), everything else (digits, the bytes of other
    -- characters) is a consonant.
    CREATE FUNCTION fts5_porter_cv(t TEXT) RETURNS TEXT
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    DECLARE
        m TEXT := translate(regexp_replace(t, '[^aeiouy]', 'c', 'g'), 'aeiouy', 'vvvvv#');
    BEGIN
        WHILE strpos(m, '#') > 0 LOOP
            m := replace(replace(regexp_replace(m, '^#', 'c'), 'c#', 'cv'), 'v#', 'vc');
        END LOOP;
        RETURN m;
    END $fn$;

    -- FTS5's porter stemmer on one lower-case word (fts5_tokenize.c, fts5PorterCb):
    -- m > 0 is "the pattern holds vc", m > 1 "vc.*vc", *o "ends cvc, not in w x y".
    -- A word with a non-ASCII character is worked on one character per byte (bytes
    -- from 0x80 as U+0180..U+01FF), so it is counted as FTS5 counts it.
    CREATE FUNCTION fts5_porter(word TEXT) RETURNS TEXT
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    DECLARE
        wide BOOLEAN := word ~ '[^\u0001-\u007f]';
        t TEXT := word;
        cv TEXT;
        before_last TEXT;
        p TEXT;
        s TEXT;
        cut BOOLEAN := false;
        kept BYTEA;
    BEGIN
        IF octet_length(word) < 3 OR octet_length(word) > 64 THEN
            RETURN word;
        END IF;
        IF wide THEN
            t := (SELECT string_agg(chr(CASE WHEN b < 128 THEN b ELSE 256 + b END), ''
                                    ORDER BY i)
                  FROM (SELECT i, get_byte(convert_to(word, 'UTF8'), i) AS b
                        FROM generate_series(0, octet_length(word) - 1) i) x);
        END IF;
        -- Step 1a
        IF right(t, 1) = 's' THEN
            IF right(t, 4) = 'sses' AND length(t) > 4 OR right(t, 3) = 'ies' AND length(t) > 3
            THEN
                t := left(t, -2);
            ELSIF right(t, 2) <> 'ss' THEN
                t := left(t, -1);
            END IF;
        END IF;
        -- Step 1b
        IF right(t, 3) = 'eed' AND length(t) > 3 THEN
            IF left(fts5_porter_cv(t), -3) ~ 'vc' THEN
                t := left(t, -1);
            END IF;
        ELSIF right(t, 2) = 'ed' AND length(t) > 2 OR right(t, 3) = 'ing' AND length(t) > 3
        THEN
            s := left(t, CASE WHEN right(t, 2) = 'ed' THEN -2 ELSE -3 END);
            IF s ~ '^[aeiou]' OR substr(s, 2) ~ '[aeiouy]' THEN
                t := s;
                IF right(t, 2) IN ('at', 'bl', 'iz') AND length(t) > 2 THEN
                    t := t || 'e';
                ELSIF length(t) > 1 AND right(t, 1) = substr(t, length(t) - 1, 1)
                      AND right(t, 1) !~ '[aeioulsz]' THEN
                    cut := ascii(right(t, 1)) >= 256;
                    t := left(t, -1);
                ELSE
                    cv := fts5_porter_cv(t);
                    IF cv ~ 'vc' AND cv !~ 'vc.*vc' AND right(cv, 3) = 'cvc'
                       AND right(t, 1) NOT IN ('w', 'x', 'y') THEN
                        t := t || 'e';
                    END IF;
                END IF;
            END IF;
        END IF;
        -- Step 1c
        IF right(t, 1) = 'y' AND (left(t, 1) ~ '[aeiou]' OR substr(left(t, -1), 2) ~ '[aeiouy]')
        THEN
            t := left(t, -1) || 'i';
        END IF;
        -- Step 2 (each step works out the pattern only where a suffix matches)
    before_last := substr(t, length(t) - 1, 1);
    IF before_last = 'a' THEN
        IF right(t, 7) = 'ational' AND length(t) > 7 THEN
            p := left(fts5_porter_cv(t), -7);
            IF p ~ 'vc' THEN t := left(t, -7) || 'ate'; END IF;
        ELSIF right(t, 6) = 'tional' AND length(t) > 6 THEN
            p := left(fts5_porter_cv(t), -6);
            IF p ~ 'vc' THEN t := left(t, -6) || 'tion'; END IF;
        END IF;
    ELSIF before_last = 'c' THEN
        IF right(t, 4) = 'enci' AND length(t) > 4 THEN
            p := left(fts5_porter_cv(t), -4);
            IF p ~ 'vc' THEN t := left(t, -4) || 'ence'; END IF;
        ELSIF right(t, 4) = 'anci' AND length(t) > 4 THEN
            p := left(fts5_porter_cv(t), -4);
            IF p ~ 'vc' THEN t := left(t, -4) || 'ance'; END IF;
        END IF;
    ELSIF before_last = 'e' THEN
        IF right(t, 4) = 'izer' AND length(t) > 4 THEN
            p := left(fts5_porter_cv(t), -4);
            IF p ~ 'vc' THEN t := left(t, -4) || 'ize'; END IF;
        END IF;
    ELSIF before_last = 'g' THEN
        IF right(t, 4) = 'logi' AND length(t) > 4 THEN
            p := left(fts5_porter_cv(t), -4);
            IF p ~ 'vc' THEN t := left(t, -4) || 'log'; END IF;
        END IF;
    ELSIF before_last = 'l' THEN
        IF right(t, 3) = 'bli' AND length(t) > 3 THEN
            p := left(fts5_porter_cv(t), -3);
            IF p ~ 'vc' THEN t := left(t, -3) || 'ble'; END IF;
        ELSIF right(t, 4) = 'alli' AND length(t) > 4 THEN
            p := left(fts5_porter_cv(t), -4);
            IF p ~ 'vc' THEN t := left(t, -4) || 'al'; END IF;
        ELSIF right(t, 5) = 'entli' AND length(t) > 5 THEN
            p := left(fts5_porter_cv(t), -5);
            IF p ~ 'vc' THEN t := left(t, -5) || 'ent'; END IF;
        ELSIF right(t, 3) = 'eli' AND length(t) > 3 THEN
            p := left(fts5_porter_cv(t), -3);
            IF p ~ 'vc' THEN t := left(t, -3) || 'e'; END IF;
        ELSIF right(t, 5) = 'ousli' AND length(t) > 5 THEN
            p := left(fts5_porter_cv(t), -5);
            IF p ~ 'vc' THEN t := left(t, -5) || 'ous'; END IF;
        END IF;
    ELSIF before_last = 'o' THEN
        IF right(t, 7) = 'ization' AND length(t) > 7 THEN
            p := left(fts5_porter_cv(t), -7);
            IF p ~ 'vc' THEN t := left(t, -7) || 'ize'; END IF;
        ELSIF right(t, 5) = 'ation' AND length(t) > 5 THEN
            p := left(fts5_porter_cv(t), -5);
            IF p ~ 'vc' THEN t := left(t, -5) || 'ate'; END IF;
        ELSIF right(t, 4) = 'ator' AND length(t) > 4 THEN
            p := left(fts5_porter_cv(t), -4);
            IF p ~ 'vc' THEN t := left(t, -4) || 'ate'; END IF;
        END IF;
    ELSIF before_last = 's' THEN
        IF right(t, 5) = 'alism' AND length(t) > 5 THEN
            p := left(fts5_porter_cv(t), -5);
            IF p ~ 'vc' THEN t := left(t, -5) || 'al'; END IF;
        ELSIF right(t, 7) = 'iveness' AND length(t) > 7 THEN
            p := left(fts5_porter_cv(t), -7);
            IF p ~ 'vc' THEN t := left(t, -7) || 'ive'; END IF;
        ELSIF right(t, 7) = 'fulness' AND length(t) > 7 THEN
            p := left(fts5_porter_cv(t), -7);
            IF p ~ 'vc' THEN t := left(t, -7) || 'ful'; END IF;
        ELSIF right(t, 7) = 'ousness' AND length(t) > 7 THEN
            p := left(fts5_porter_cv(t), -7);
            IF p ~ 'vc' THEN t := left(t, -7) || 'ous'; END IF;
        END IF;
    ELSIF before_last = 't' THEN
        IF right(t, 5) = 'aliti' AND length(t) > 5 THEN
            p := left(fts5_porter_cv(t), -5);
            IF p ~ 'vc' THEN t := left(t, -5) || 'al'; END IF;
        ELSIF right(t, 5) = 'iviti' AND length(t) > 5 THEN
            p := left(fts5_porter_cv(t), -5);
            IF p ~ 'vc' THEN t := left(t, -5) || 'ive'; END IF;
        ELSIF right(t, 6) = 'biliti' AND length(t) > 6 THEN
            p := left(fts5_porter_cv(t), -6);
            IF p ~ 'vc' THEN t := left(t, -6) || 'ble'; END IF;
        END IF;
    END IF;
        -- Step 3
    before_last := substr(t, length(t) - 1, 1);
    IF before_last = 'a' THEN
        IF right(t, 4) = 'ical' AND length(t) > 4 THEN
            p := left(fts5_porter_cv(t), -4);
            IF p ~ 'vc' THEN t := left(t, -4) || 'ic'; END IF;
        END IF;
    ELSIF before_last = 's' THEN
        IF right(t, 4) = 'ness' AND length(t) > 4 THEN
            p := left(fts5_porter_cv(t), -4);
            IF p ~ 'vc' THEN t := left(t, -4) || ''; END IF;
        END IF;
    ELSIF before_last = 't' THEN
        IF right(t, 5) = 'icate' AND length(t) > 5 THEN
            p := left(fts5_porter_cv(t), -5);
            IF p ~ 'vc' THEN t := left(t, -5) || 'ic'; END IF;
        ELSIF right(t, 5) = 'iciti' AND length(t) > 5 THEN
            p := left(fts5_porter_cv(t), -5);
            IF p ~ 'vc' THEN t := left(t, -5) || 'ic'; END IF;
        END IF;
    ELSIF before_last = 'u' THEN
        IF right(t, 3) = 'ful' AND length(t) > 3 THEN
            p := left(fts5_porter_cv(t), -3);
            IF p ~ 'vc' THEN t := left(t, -3) || ''; END IF;
        END IF;
    ELSIF before_last = 'v' THEN
        IF right(t, 5) = 'ative' AND length(t) > 5 THEN
            p := left(fts5_porter_cv(t), -5);
            IF p ~ 'vc' THEN t := left(t, -5) || ''; END IF;
        END IF;
    ELSIF before_last = 'z' THEN
        IF right(t, 5) = 'alize' AND length(t) > 5 THEN
            p := left(fts5_porter_cv(t), -5);
            IF p ~ 'vc' THEN t := left(t, -5) || 'al'; END IF;
        END IF;
    END IF;
        -- Step 4
    before_last := substr(t, length(t) - 1, 1);
    IF before_last = 'a' THEN
        IF right(t, 2) = 'al' AND length(t) > 2 THEN
            p := left(fts5_porter_cv(t), -2);
            IF p ~ 'vc.*vc' THEN t := left(t, -2) || ''; END IF;
        END IF;
    ELSIF before_last = 'c' THEN
        IF right(t, 4) = 'ance' AND length(t) > 4 THEN
            p := left(fts5_porter_cv(t), -4);
            IF p ~ 'vc.*vc' THEN t := left(t, -4) || ''; END IF;
        ELSIF right(t, 4) = 'ence' AND length(t) > 4 THEN
            p := left(fts5_porter_cv(t), -4);
            IF p ~ 'vc.*vc' THEN t := left(t, -4) || ''; END IF;
        END IF;
    ELSIF before_last = 'e' THEN
        IF right(t, 2) = 'er' AND length(t) > 2 THEN
            p := left(fts5_porter_cv(t), -2);
            IF p ~ 'vc.*vc' THEN t := left(t, -2) || ''; END IF;
        END IF;
    ELSIF before_last = 'i' THEN
        IF right(t, 2) = 'ic' AND length(t) > 2 THEN
            p := left(fts5_porter_cv(t), -2);
            IF p ~ 'vc.*vc' THEN t := left(t, -2) || ''; END IF;
        END IF;
    ELSIF before_last = 'l' THEN
        IF right(t, 4) = 'able' AND length(t) > 4 THEN
            p := left(fts5_porter_cv(t), -4);
            IF p ~ 'vc.*vc' THEN t := left(t, -4) || ''; END IF;
        ELSIF right(t, 4) = 'ible' AND length(t) > 4 THEN
            p := left(fts5_porter_cv(t), -4);
            IF p ~ 'vc.*vc' THEN t := left(t, -4) || ''; END IF;
        END IF;
    ELSIF before_last = 'n' THEN
        IF right(t, 3) = 'ant' AND length(t) > 3 THEN
            p := left(fts5_porter_cv(t), -3);
            IF p ~ 'vc.*vc' THEN t := left(t, -3) || ''; END IF;
        ELSIF right(t, 5) = 'ement' AND length(t) > 5 THEN
            p := left(fts5_porter_cv(t), -5);
            IF p ~ 'vc.*vc' THEN t := left(t, -5) || ''; END IF;
        ELSIF right(t, 4) = 'ment' AND length(t) > 4 THEN
            p := left(fts5_porter_cv(t), -4);
            IF p ~ 'vc.*vc' THEN t := left(t, -4) || ''; END IF;
        ELSIF right(t, 3) = 'ent' AND length(t) > 3 THEN
            p := left(fts5_porter_cv(t), -3);
            IF p ~ 'vc.*vc' THEN t := left(t, -3) || ''; END IF;
        END IF;
    ELSIF before_last = 'o' THEN
        IF right(t, 3) = 'ion' AND length(t) > 3 THEN
            p := left(fts5_porter_cv(t), -3);
            IF right(left(t, -3), 1) IN ('s', 't') AND p ~ 'vc.*vc' THEN t := left(t, -3) || ''; END IF;
        ELSIF right(t, 2) = 'ou' AND length(t) > 2 THEN
            p := left(fts5_porter_cv(t), -2);
            IF p ~ 'vc.*vc' THEN t := left(t, -2) || ''; END IF;
        END IF;
    ELSIF before_last = 's' THEN
        IF right(t, 3) = 'ism' AND length(t) > 3 THEN
            p := left(fts5_porter_cv(t), -3);
            IF p ~ 'vc.*vc' THEN t := left(t, -3) || ''; END IF;
        END IF;
    ELSIF before_last = 't' THEN
        IF right(t, 3) = 'ate' AND length(t) > 3 THEN
            p := left(fts5_porter_cv(t), -3);
            IF p ~ 'vc.*vc' THEN t := left(t, -3) || ''; END IF;
        ELSIF right(t, 3) = 'iti' AND length(t) > 3 THEN
            p := left(fts5_porter_cv(t), -3);
            IF p ~ 'vc.*vc' THEN t := left(t, -3) || ''; END IF;
        END IF;
    ELSIF before_last = 'u' THEN
        IF right(t, 3) = 'ous' AND length(t) > 3 THEN
            p := left(fts5_porter_cv(t), -3);
            IF p ~ 'vc.*vc' THEN t := left(t, -3) || ''; END IF;
        END IF;
    ELSIF before_last = 'v' THEN
        IF right(t, 3) = 'ive' AND length(t) > 3 THEN
            p := left(fts5_porter_cv(t), -3);
            IF p ~ 'vc.*vc' THEN t := left(t, -3) || ''; END IF;
        END IF;
    ELSIF before_last = 'z' THEN
        IF right(t, 3) = 'ize' AND length(t) > 3 THEN
            p := left(fts5_porter_cv(t), -3);
            IF p ~ 'vc.*vc' THEN t := left(t, -3) || ''; END IF;
        END IF;
    END IF;
        -- Step 5a
        IF right(t, 1) = 'e' THEN
            p := left(fts5_porter_cv(t), -1);
            IF p ~ 'vc.*vc' OR p ~ 'vc' AND NOT (right(p, 3) = 'cvc'
                                                AND substr(t, length(t) - 1, 1)
                                                    NOT IN ('w', 'x', 'y')) THEN
                t := left(t, -1);
            END IF;
        END IF;
        -- Step 5b
        IF right(t, 2) = 'll' AND left(fts5_porter_cv(t), -1) ~ 'vc.*vc' THEN
            t := left(t, -1);
        END IF;
        IF NOT wide THEN
            RETURN t;
        END IF;
        IF cut THEN  -- the last character lost its last byte (see the module's note)
            p := substring(t FROM '[\u01c0-\u01ff][\u0180-\u01bf]*$');
            t := left(t, -length(p));
        END IF;
        kept := (SELECT decode(string_agg(lpad(to_hex(ascii(c) % 256), 2, '0'), ''
                                          ORDER BY i), 'hex')
                 FROM unnest(regexp_split_to_array(t, '')) WITH ORDINALITY u(c, i));
        t := COALESCE(convert_from(kept, 'UTF8'), '');
        IF cut THEN
            t := t || chr(65533) || (SELECT string_agg(to_hex(ascii(c) - 256), '' ORDER BY i)
                FROM unnest(regexp_split_to_array(p, '')) WITH ORDINALITY u(c, i));
        END IF;
        RETURN t;
    END $fn$;
    
    -- One lower-case word of fts_text as FTS5's porter tokenizer stems it; `plain`:
    -- the caller knows Snowball agrees on it (fts_plain). Not STRICT, one expression:
    -- PostgreSQL inlines it into the queries below.
    CREATE FUNCTION fts_stem(word TEXT, plain BOOLEAN DEFAULT false) RETURNS TEXT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
        SELECT CASE WHEN octet_length(word) < 3 OR octet_length(word) > 64 THEN word
                    WHEN plain OR octet_length(word) = length(word) AND word NOT LIKE '%logi%' AND word NOT LIKE '%logy%' AND word NOT LIKE '%bli%' AND word NOT LIKE '%bly%' AND NOT ((word LIKE '%ed' OR word LIKE '%ing' OR word LIKE '%eds' OR word LIKE '%ings') AND word ~ '([0-9chjkqvwxy])\1(ed|ing)s?$') AND word NOT IN ('eed', 'ies', 'sses')
                    THEN COALESCE((ts_lexize('wardian_stem', word))[1], word)
                    ELSE fts5_porter(word) END
    $fn$;

    -- Whether Snowball stems every word of the lower-case text `t` as FTS5 does: the
    -- test above on the whole text at once (most texts pass, and a word's own test
    -- costs more than stemming it).
    CREATE FUNCTION fts_plain(t TEXT) RETURNS BOOLEAN
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
        SELECT octet_length(t) = length(t) AND t NOT LIKE '%logi%' AND t NOT LIKE '%logy%'
               AND t NOT LIKE '%bli%' AND t NOT LIKE '%bly%'
               AND t !~ '([0-9chjkqvwxy])\1(ed|ing)|(^| )(eed|ies|sses)( |$)'
    $fn$;

    -- The tsvector of a text: its words (_WORDS) stemmed, numbered from 1 as
    -- to_tsvector numbers them (at most 16383; ::tsvector merges a lexeme's positions
    -- and keeps its first 256). A word of 2048 bytes or more is left out, as to_tsvector
    -- leaves it out (a tsvector cannot hold it). Quoting a word needs no escapes: ' and
    -- \ separate words (fts_text), so no word holds one.
    CREATE FUNCTION fts_vector(value TEXT) RETURNS tsvector
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    DECLARE
        t TEXT := btrim(regexp_replace(translate(fts_text(value), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'), '  +', ' ', 'g'));
        plain BOOLEAN := fts_plain(t);
    BEGIN
        -- Two queries, not one with `plain` in it: PL/pgSQL would plan that one again
        -- for each call (its plan for a known `plain` looks cheaper).
        IF plain THEN
            RETURN (SELECT COALESCE(string_agg('''' || fts_stem(w, true) || ''':'
                                               || least(n, 16383), ' '), '')::tsvector
                    FROM string_to_table(t, ' ') WITH ORDINALITY s(w, n)
                    WHERE octet_length(w) < 2048);
        END IF;
        RETURN (SELECT COALESCE(string_agg('''' || fts_stem(w) || ''':'
                                           || least(n, 16383), ' '), '')::tsvector
                FROM string_to_table(t, ' ') WITH ORDINALITY s(w, n)
                WHERE octet_length(w) < 2048);
    END $fn$;

    -- A query word (or words) as one phrase of stems, as phraseto_tsquery writes it;
    -- with `prefix`, the last word matches as a prefix (Garden's text filter).
    CREATE FUNCTION fts_query(value TEXT, prefix BOOLEAN DEFAULT false) RETURNS tsquery
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    DECLARE
        words TEXT[] := string_to_array(btrim(regexp_replace(translate(fts_text(value), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'), '  +', ' ', 'g')), ' ');
    BEGIN
        RETURN (SELECT COALESCE(string_agg('''' || fts_stem(w) || ''''
                                           || CASE WHEN prefix AND n = cardinality(words)
                                                   THEN ':*' ELSE '' END,
                                           ' <-> ' ORDER BY n), '')::tsquery
                FROM unnest(words) WITH ORDINALITY s(w, n) WHERE octet_length(w) < 2048);
    END $fn$;

    CREATE OR REPLACE FUNCTION records_fts_sync() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
        IF TG_OP = 'UPDATE' AND NEW.text = OLD.text AND NEW.evidence = OLD.evidence THEN
            NEW.fts := OLD.fts;
            NEW.doclen := OLD.doclen;
            RETURN NEW;
        END IF;
        NEW.fts := fts_vector(NEW.text) || fts_vector(NEW.evidence);
        NEW.doclen := (SELECT COALESCE(sum(cardinality(positions)), 0) FROM unnest(NEW.fts));
        RETURN NEW;
    END $fn$;

    -- The trigger runs with the schema's search_path whoever writes (migration 2); the
    -- functions above need the schema on the caller's search_path, as fts_text does.
    ALTER FUNCTION records_fts_sync() SET search_path FROM CURRENT;

    ALTER TABLE records DISABLE TRIGGER records_fts_sync;
    UPDATE records SET fts = fts_vector(text) || fts_vector(evidence);
    UPDATE records SET doclen = (SELECT COALESCE(sum(cardinality(positions)), 0)
                                 FROM unnest(fts));
    ALTER TABLE records ENABLE TRIGGER records_fts_sync;
    
